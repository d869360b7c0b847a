import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Context } from "../context/context";
import { InMemorySessionStore } from "@rein/session";
import { SessionNodeWriter } from "@rein/session";
import { sharedWriterCount } from "@rein/session";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

/**
 * Collects garbage, then waits for `done()` while the finalisers run; collects again only when they did not get
 * there (at most 5 collections). A forced collection marks the whole heap, which in a jest worker late in a full run
 * is large: about 1 s of CPU each there (7 collections took 6.8 s), so the test collects as few times as it can. The
 * wait before a collection ends the job that last touched the writers (a `WeakRef` keeps its target through that job).
 */
async function collectUntil(done: () => boolean): Promise<void> {
  for (let collection = 0; collection < 5 && !done(); collection++) {
    await tick();
    collectGarbage();
    for (let wait = 0; wait < 20 && !done(); wait++) await tick();
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
    store.createSession("idle", {});
    const held = new SessionNodeWriter(store, "held");
    new SessionNodeWriter(store, "pending", { batching: "manual" }).append({ id: "a", role: "user", name: "user" });
    // An idle writer nobody holds: once its entry is gone, a collection has run and the registry's finalisers with it
    // (one registry: the entries of the other two, had they been collected, would be gone by then too).
    new SessionNodeWriter(store, "idle");
    await collectUntil(() => sharedWriterCount(store) < 3);
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
