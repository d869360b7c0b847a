import { describeLeaseTakeover } from "../../core/src/resumable/__fixtures__/lease-takeover";
import { PostgresSessionStore } from "./postgres-session-store";
import { freshSchemaName, startEmbeddedPostgres, type EmbeddedPostgresServer } from "./__fixtures__/embedded-postgres";

let server: EmbeddedPostgresServer | undefined;
beforeAll(async () => {
  server = await startEmbeddedPostgres();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

// Each worker its own store (its own connection and owner id) on one schema.
describeLeaseTakeover("PostgresSessionStore", () => {
  const schema = freshSchemaName();
  const open = (): PostgresSessionStore => new PostgresSessionStore({ connectionString: server!.connectionString, schema, shutdownFlush: false });
  return [open(), open()];
});

// The same take-over with worker A on the asynchronous write path: the run's save points are awaited commits on
// the pool (run.save()), and a late one under a lost lease is refused the same way. Worker B's store is on the
// synchronous path: in this one process, B's claim on a pool would wait for the event loop A's stall holds (and
// A's overdue renewal would then run first), which two processes do not share.
describeLeaseTakeover("PostgresSessionStore with asyncWrites", () => {
  const schema = freshSchemaName();
  const open = (asyncWrites: boolean): PostgresSessionStore =>
    new PostgresSessionStore({ connectionString: server!.connectionString, schema, shutdownFlush: false, ...(asyncWrites ? { asyncWrites: { poolSize: 2 } } : {}) });
  return [open(true), open(false)];
});
