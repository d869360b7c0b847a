/**
 * Child process for postgres-exit-flush.test.ts. Usage:
 * `exit-flush-child.ts <connectionString> <schema> <exit|signal>`. A writer on
 * the store's asynchronous path (`asyncWrites`) appends `first-0..9` (their
 * commit starts and, while the parent holds the session row's lock, stays in
 * flight), then `later-0..9` behind it, and prints "queued". With `exit` it
 * then calls `process.exit(0)` when a line arrives on stdin; with `signal` it
 * waits for the parent's SIGTERM. The store's shutdown flush (on by default)
 * is what is tested.
 */
import { SessionNodeWriter } from "@rein/session";
import { PostgresSessionStore } from "../postgres-session-store";

const [connectionString, schema, mode] = process.argv.slice(2) as [string, string, "exit" | "signal"];
const store = new PostgresSessionStore({ connectionString, schema, asyncWrites: true, busyTimeoutMs: 30_000 });
const writer = new SessionNodeWriter(store, "exiting", { batching: "manual" });

let previous: string | undefined;
const append = (id: string): void => {
  writer.append({ id, role: "code", name: "Worker.step", ...(previous === undefined ? {} : { predecessor: previous }) });
  previous = id;
};

for (let i = 0; i < 10; i++) append(`first-${i}`);
writer.flush(); // starts the commit on the pool; the parent's lock holds it in flight
setTimeout(() => {
  for (let i = 0; i < 10; i++) append(`later-${i}`);
  writer.flush(); // queued behind the commit in flight
  console.log("queued");
  if (mode === "exit") process.stdin.once("data", () => process.exit(0));
}, 100);
setInterval(() => undefined, 60_000);
