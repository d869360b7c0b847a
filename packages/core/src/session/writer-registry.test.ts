import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Context } from "../context/context";
import { InMemorySessionStore } from "@rein/session";
import { SessionNodeWriter } from "@rein/session";
import { sharedWriterCount } from "@rein/session";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

/** Collects garbage until `done()` (finalisers run between collections), or gives up after 20 rounds. */
async function collectUntil(done: () => boolean): Promise<void> {
  for (let round = 0; round < 20 && !done(); round++) {
    await new Promise((resolve) => setTimeout(resolve, 1));
    collectGarbage();
  }
}

describe("the shared writer of a session", () => {
  it("new SessionNodeWriter(store, id) returns the writer in use; { shared: false } makes one of its own", () => {
    const store = new InMemorySessionStore();
    store.createSession("s", {});
    const writer = new SessionNodeWriter(store, "s");
    expect(new SessionNodeWriter(store, "s")).toBe(writer);
    expect(new SessionNodeWriter(store, "s", { batching: "tick" })).toBe(writer);
    const own = new SessionNodeWriter(store, "s", { shared: false });
    expect(own).not.toBe(writer);
    // A writer of its own is not registered: the shared one is still handed out.
    expect(new SessionNodeWriter(store, "s")).toBe(writer);
    expect(Context.forSession(store, "s").store).toBe(writer);
  });

  it("asking for the session's writer with another batching or handler is a TypeError saying what to do", () => {
    const store = new InMemorySessionStore();
    store.createSession("s", {});
    const handler = (): void => {};
    const writer = new SessionNodeWriter(store, "s", { batching: "manual" });
    expect(() => new SessionNodeWriter(store, "s", { batching: "tick" })).toThrow(
      `Session 's' (in-memory store) already has a writer in this process with batching "manual"`,
    );
    expect(() => new SessionNodeWriter(store, "s", { batching: "tick" })).toThrow("pass { shared: false } for a writer of its own");
    // A handler is taken by a writer that has none; another one is refused.
    expect(new SessionNodeWriter(store, "s", { onCommitError: handler })).toBe(writer);
    expect(new SessionNodeWriter(store, "s", { onCommitError: handler })).toBe(writer);
    expect(() => new SessionNodeWriter(store, "s", { onCommitError: () => {} })).toThrow("already has a writer in this process with another onCommitError");
  });

  it("writers are held weakly: one Context.forSession per request leaves nothing behind once unused", async () => {
    const store = new InMemorySessionStore();
    for (let request = 0; request < 200; request++) Context.forSession(store, `session-${request}`);
    expect(sharedWriterCount(store)).toBe(200);
    await collectUntil(() => sharedWriterCount(store) === 0);
    expect(sharedWriterCount(store)).toBe(0);
  });

  it("a writer still in use, or holding a batch not yet committed, is never dropped", async () => {
    const store = new InMemorySessionStore();
    store.createSession("held", {});
    store.createSession("pending", {});
    const held = new SessionNodeWriter(store, "held");
    new SessionNodeWriter(store, "pending", { batching: "manual" }).append({ id: "a", role: "user", name: "user" });
    for (let round = 0; round < 5; round++) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      collectGarbage();
    }
    expect(new SessionNodeWriter(store, "held")).toBe(held);
    // The same writer, still holding its batch.
    expect(new SessionNodeWriter(store, "pending").pending).toBe(1);
    expect(sharedWriterCount(store)).toBe(2);
  });

  it("a deleted session and a closed store let go of their writers", () => {
    const store = new InMemorySessionStore();
    store.createSession("s", {});
    const writer = new SessionNodeWriter(store, "s");
    writer.append({ id: "a", role: "user", name: "user" });
    writer.flush();
    store.deleteSession("s");
    store.createSession("s", {});
    // The new session under the old id gets a fresh writer: nothing of the deleted one is known.
    const fresh = new SessionNodeWriter(store, "s");
    expect(fresh).not.toBe(writer);
    expect(fresh.append({ id: "a", role: "user", name: "user" }).seq).toBe(0);
    expect(fresh.pending).toBe(1);
    store.close();
    expect(sharedWriterCount(store)).toBe(0);
  });
});
