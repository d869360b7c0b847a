/**
 * A control request (cancel, approve, deny) sent while an instance's
 * listening connection is down is recorded, and its NOTIFY is missed: once
 * the channel listens again it gives its handlers every request recorded
 * since the lost connection began to listen, so a worker hears the cancel
 * without waiting for its next job.
 */
import { Client } from "pg";
import { startEmbeddedPostgres, freshSchemaName, type EmbeddedPostgresServer } from "../../../store-postgres/src/__fixtures__/embedded-postgres";
import { LISTENER_NAME, PostgresRunChannel } from "./postgres-run-channel";
import type { RunControl } from "./run-channel";

let server: EmbeddedPostgresServer | undefined;
beforeAll(async () => {
  server = await startEmbeddedPostgres();
}, 300_000);
afterAll(async () => {
  await server?.stop();
});

/** Polls `done`; gives up (throws) after 60 s, so a failing test ends instead of polling on after its timeout. */
async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  const giveUp = Date.now() + 60_000;
  while (!(await done())) {
    if (Date.now() > giveUp) throw new Error("waited 60 s: never happened");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test("a cancel sent while the listening connection is down reaches the handlers once the channel listens again", async () => {
  const schema = freshSchemaName();
  const worker = new PostgresRunChannel({ connectionString: server!.connectionString, schema, onError: () => undefined });
  const sender = new PostgresRunChannel({ connectionString: server!.connectionString, schema, onError: () => undefined });
  const admin = new Client({ connectionString: server!.connectionString });
  await admin.connect();
  const listeners = async () =>
    (await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()", [LISTENER_NAME])).rows.map((row) => row.pid);
  try {
    const heard: RunControl[] = [];
    worker.onControl((request) => heard.push(request));
    await worker.listening();
    // Heard at once while it listens.
    expect(await sender.control({ runId: "live", action: "cancel" })).toBe(true);
    await until(() => heard.some((request) => request.runId === "live"));

    // The listening connection is lost (the database ended it); a cancel is sent before the channel listens again
    // (it waits half a second first). Tried again, with another run, on a machine too slow to fit in that gap.
    let sentWhileDown: string | undefined;
    for (let attempt = 1; attempt <= 5 && sentWhileDown === undefined; attempt++) {
      const [pid] = await listeners();
      expect(pid).toBeDefined();
      await admin.query("SELECT pg_terminate_backend($1)", [pid]);
      await until(async () => (await listeners()).length === 0);
      const runId = `missed-${attempt}`;
      expect(await sender.control({ runId, action: "cancel" })).toBe(true);
      if ((await listeners()).length === 0) sentWhileDown = runId;
      await until(async () => (await listeners()).length === 1);
    }
    expect(sentWhileDown).toBeDefined();
    await until(() => heard.some((request) => request.runId === sentWhileDown));
    expect(heard).toContainEqual({ runId: sentWhileDown, action: "cancel" });
  } finally {
    await admin.end();
    await worker.close();
    await sender.close();
  }
}, 120_000);
