import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InMemorySessionStore } from "./in-memory-session-store";
import { SessionStore } from "./session-store";
import { describeSessionStoreContract } from "./session-store-contract";

// One contract, every store: the suite lives in session-store-contract.ts so a new store runs it too.
describeSessionStoreContract("InMemorySessionStore", () => new InMemorySessionStore());
describeSessionStoreContract("SessionStore(:memory:)", () => new SessionStore({ path: ":memory:" }));

let directory: string | undefined;
afterAll(() => {
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
});
let files = 0;
describeSessionStoreContract("SessionStore(file)", () => {
  directory ??= mkdtempSync(join(tmpdir(), "rein-store-contract-"));
  return new SessionStore({ path: join(directory, `contract-${++files}.db`), shutdownFlush: false });
});
