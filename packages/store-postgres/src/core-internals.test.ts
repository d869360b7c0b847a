import { InMemorySessionStore, SessionNodeWriter } from "@rein/core";
import { flushPendingWriters } from "./core-internals";

test("the writer registry reached is the one core's writers use", () => {
  const store = new InMemorySessionStore();
  store.createSession("s");
  const writer = new SessionNodeWriter(store, "s", { batching: "manual" });
  writer.append({ id: "a", role: "user", name: "user" });
  flushPendingWriters(store);
  expect(writer.pending).toBe(0);
});
