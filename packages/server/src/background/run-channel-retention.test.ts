/**
 * A background run's events and control requests do not stay in the
 * database for ever: rows older than the channel's `retentionMs` are
 * deleted (by the database's clock) when a channel opens, every hour after,
 * and on `prune()`; younger ones stay.
 */
import { Client } from "pg";
import { startEmbeddedPostgres, freshSchemaName, type EmbeddedPostgresServer } from "../../../store-postgres/src/__fixtures__/embedded-postgres";
import { PostgresRunChannel } from "./postgres-run-channel";

let server: EmbeddedPostgresServer | undefined;
beforeAll(async () => {
  server = await startEmbeddedPostgres();
}, 300_000);
afterAll(async () => {
  await server?.stop();
});

/** Makes the rows of `runId` look `ageMs` old (rather than waiting). */
async function age(schema: string, runId: string, ageMs: number): Promise<void> {
  const client = new Client({ connectionString: server!.connectionString });
  await client.connect();
  try {
    for (const table of ["rein_run_events", "rein_run_controls"]) {
      await client.query(`UPDATE "${schema}".${table} SET created_at = now() - $2 * interval '1 millisecond' WHERE run_id = $1`, [runId, ageMs]);
    }
  } finally {
    await client.end();
  }
}

test("events and controls older than retentionMs are pruned; a younger run's are kept; on open too", async () => {
  const schema = freshSchemaName();
  const hour = 3_600_000;
  const channel = new PostgresRunChannel({ connectionString: server!.connectionString, schema, retentionMs: hour });
  try {
    for (const runId of ["old", "young"]) {
      await channel.append(runId, [{ type: "run-start", model: "m" }, { type: "run-end" }]);
      expect(await channel.control({ runId, action: "cancel" })).toBe(true);
    }
    // Nothing is old yet; this also waits for the prune the channel ran by itself on open.
    expect(await channel.prune()).toBe(0);
    await age(schema, "old", 2 * hour);
    await age(schema, "young", hour / 2);

    expect(await channel.prune()).toBe(3); // two events and one control of "old"

    expect(await channel.read("old", 0)).toEqual([]);
    expect(await channel.controlsOf("old")).toEqual([]);
    expect((await channel.read("young", 0)).map((stored) => stored.seq)).toEqual([1, 2]);
    expect(await channel.controlsOf("young")).toHaveLength(1);
    expect(await channel.prune()).toBe(0);

    // Another process opening the channel later prunes what aged meanwhile.
    await age(schema, "young", 2 * hour);
    const later = new PostgresRunChannel({ connectionString: server!.connectionString, schema, retentionMs: hour });
    try {
      // The prune on open deletes the events, then the controls (two statements): wait for both.
      for (let tries = 0; (await later.read("young", 0)).length > 0 || (await later.controlsOf("young")).length > 0; tries++) {
        expect(tries).toBeLessThan(200);
        await new Promise((done) => setTimeout(done, 50));
      }
      expect(await later.controlsOf("young")).toEqual([]);
    } finally {
      await later.close();
    }
  } finally {
    await channel.close();
  }
});

test("a retentionMs that is not a positive integer is a TypeError saying what to give", () => {
  for (const retentionMs of [0, -1, 1.5, Number.NaN]) {
    expect(() => new PostgresRunChannel({ connectionString: "postgres://localhost/x", retentionMs })).toThrow(
      /retentionMs must be a positive integer of milliseconds \(for example 604800000 for 7 days\)/,
    );
  }
});
