import { InMemorySessionStore, SessionNodeWriter } from "@rein/core";
import { flushPendingWriters } from "@rein/session";

// The store reaches the writer registry through @rein/session's implementer API (it imports nothing from core):
// it must be the one registry the writers of an application that imports @rein/core use.
test("the writer registry @rein/session exports is the one @rein/core's writers use", () => {
  const store = new InMemorySessionStore();
  store.createSession("s");
  const writer = new SessionNodeWriter(store, "s", { batching: "manual" });
  writer.append({ id: "a", role: "user", name: "user" });
  flushPendingWriters(store);
  expect(writer.pending).toBe(0);
});
