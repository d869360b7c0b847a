/**
 * Child process for postgres-async-writes.test.ts. Usage:
 * `dropped-pool-child.ts <connectionString> <schema>`. Commits one node on
 * the asynchronous path, prints "ready" and, when a line arrives on stdin
 * (the parent has ended the pool's connections meanwhile), commits another
 * and prints the session's node ids. An unhandled error of a dropped
 * connection would end the process before that.
 */
import { SessionNodeWriter } from "@rein/session";
import { PostgresSessionStore } from "../postgres-session-store";

const [connectionString, schema] = process.argv.slice(2) as [string, string];
const store = new PostgresSessionStore({ connectionString, schema, shutdownFlush: false, asyncWrites: { poolSize: 2 } });
store.createSession("s1");
const writer = new SessionNodeWriter(store, "s1", { batching: "manual" });
writer.append({ id: "a", role: "code", name: "A.run" });
void writer.flushAsync().then(() => {
  console.log("ready");
  process.stdin.once("data", () => {
    // At once, whether or not the dropped connections' events have arrived: a dead pooled connection is replaced.
    writer.append({ id: "b", role: "code", name: "B.run", predecessor: "a" });
    void writer.flushAsync().then(async () => {
      console.log(JSON.stringify(store.readNodes("s1").map((node) => node.id)));
      await store.closeAsync();
      process.exit(0);
    });
  });
});
