import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InMemorySessionStore } from "../session/in-memory-session-store";
import { SessionStore } from "../session/session-store";
import { describeLeaseTakeover } from "./__fixtures__/lease-takeover";

// One scenario, every store: the suite lives in __fixtures__/lease-takeover.ts so the Postgres store runs it too.
describeLeaseTakeover("InMemorySessionStore (both workers on one store)", () => {
  const store = new InMemorySessionStore();
  return [store, store];
});

let directory: string | undefined;
let files = 0;
afterAll(() => {
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
});
describeLeaseTakeover("SessionStore (each worker its own store on one SQLite file)", (workerB) => {
  directory ??= mkdtempSync(join(tmpdir(), "rein-lease-fence-"));
  const path = join(directory, `runs-${++files}.db`);
  return [new SessionStore({ path, shutdownFlush: false }), new workerB.SessionStore({ path, shutdownFlush: false })];
});
