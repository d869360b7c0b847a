/**
 * A store on the asynchronous path (asyncWrites: what `rein serve` and
 * `rein worker` open) whose own connection was ended by the server (a
 * restart, a failover, an idle timeout) while it went on renewing its lease
 * on its pool: it takes its liveness lock again at once, so no other store
 * takes its live run or interrupts its nodes (found by an attack review,
 * 2026-12-03: it stayed "gone" for good). A real PostgreSQL.
 */
import { Client } from "pg";
import { PostgresSessionStore } from "./postgres-session-store";
import { freshSchemaName, startEmbeddedPostgres, type EmbeddedPostgresServer } from "./__fixtures__/embedded-postgres";

let server: EmbeddedPostgresServer | undefined;
let admin: Client | undefined;
beforeAll(async () => {
  server = await startEmbeddedPostgres();
  admin = new Client({ connectionString: server.connectionString });
  await admin.connect();
}, 120_000);
afterAll(async () => {
  await admin?.end().catch(() => undefined);
  await server?.stop();
});
const named = (application: string): string => `${server!.connectionString}?application_name=${application}`;

test("an asyncWrites store that keeps renewing its lease is never counted gone: another worker cannot claim its live run", async () => {
  const schema = freshSchemaName();
  const a = new PostgresSessionStore({ connectionString: named("rein-a"), schema, shutdownFlush: false, asyncWrites: { poolSize: 2 } });
  const b = new PostgresSessionStore({ connectionString: named("rein-b"), schema, shutdownFlush: false });
  try {
    await a.asyncReads!.createSession("s");
    await a.asyncLeases!.registerRun("run-1", "s", "P.process", 60_000);
    // A blip: the server ends A's connections (a restart, an idle timeout, a failover).
    await admin!.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'rein-a'");
    // The pool's idle connections notice their end (a pooled call on one that has not yet would fail once, as documented).
    await new Promise((done) => setTimeout(done, 300));
    // A is alive and working: it renews its lease and commits on its pool, as a running run does.
    for (let i = 0; i < 3; i++) {
      expect(await a.asyncLeases!.renewRun("run-1", 60_000, 1)).toBe(true);
      await a.commitAsync!("s", [{ kind: "append", node: { id: `n${i}`, seq: i, createdAt: i, role: "code", name: "step", input: undefined, output: undefined, caller: null, predecessor: null, metadata: { status: "running" } } }], { fences: [{ runId: "run-1", epoch: 1 }] });
      await new Promise((done) => setTimeout(done, 50));
    }
    // Its liveness lock is held again (by its own connection, made anew); a store that stayed gone is waited for 30 s, then taken below.
    for (const giveUpAt = Date.now() + 30_000; Date.now() < giveUpAt; ) {
      const { rows } = await admin!.query("SELECT count(*)::int AS held FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = 'rein-a'");
      if ((rows[0] as { held: number }).held > 0) break;
      await new Promise((done) => setTimeout(done, 50));
    }
    // B (another process, say resumeInterrupted at its start-up) must not take a run whose live holder renews it.
    expect(b.claimRun("run-1", ["running"], 60_000, 1)).toBe(false);
    // nor mark the live store's running nodes interrupted
    expect(b.interruptAbandoned()).toBe(0);
  } finally {
    await a.closeAsync().catch(() => undefined);
    b.close();
  }
}, 60_000);
