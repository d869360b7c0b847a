/**
 * `SessionNodeWriter.open` and `readAhead` on a store with `asyncReads`: the
 * session is read (or created), and the head and history behind it are read
 * ahead, through the awaited reads only; the next top-level call then reads
 * nothing synchronously. On a store without them, `open` is the synchronous
 * create-when-missing.
 */
import { InMemorySessionStore } from "./in-memory-session-store";
import { SessionNodeWriter } from "./session-node-writer";
import type { SessionStoreAsyncReads } from "./session-store-like";

/** An in-memory store whose synchronous reads count their calls, with awaited reads beside them. */
class CountingStore extends InMemorySessionStore {
  readonly syncReads: string[] = [];
  readonly awaited: string[] = [];
  readonly asyncReads: SessionStoreAsyncReads = {
    getSession: async (id) => (this.awaited.push("getSession"), super.getSession(id)),
    hasSession: async (id) => (this.awaited.push("hasSession"), super.hasSession(id)),
    readNodes: async (id) => (this.awaited.push("readNodes"), super.readNodes(id)),
    createSession: async (id, options) => (this.awaited.push("createSession"), super.createSession(id, options)),
    head: async (id) => (this.awaited.push("head"), super.head(id)),
    readAncestry: async (id, nodeId, options) => (this.awaited.push("readAncestry"), super.readAncestry(id, nodeId, options)),
    listSessions: async () => (this.awaited.push("listSessions"), super.listSessions()),
    exportGraph: async (id, options) => (this.awaited.push("exportGraph"), super.exportGraph(id, options)),
  };
  override getSession(id: string) {
    this.syncReads.push("getSession");
    return super.getSession(id);
  }
  override hasSession(id: string) {
    this.syncReads.push("hasSession");
    return super.hasSession(id);
  }
  override head(id: string) {
    this.syncReads.push("head");
    return super.head(id);
  }
  override readAncestry(...args: Parameters<InMemorySessionStore["readAncestry"]>) {
    this.syncReads.push("readAncestry");
    return super.readAncestry(...args);
  }
}

test("open creates a missing session and readAhead reads head and history, all awaited; the next call's head and history need no synchronous read", async () => {
  const store = new CountingStore();
  const first = await SessionNodeWriter.open(store, "s1", { shared: false, batching: "manual" });
  first.append({ id: "t1", role: "code", name: "A.run", caller: null, predecessor: null, metadata: { status: "completed" } });
  first.append({ id: "l1", role: "llm", name: "model", caller: "t1", input: "hi", output: "hello", metadata: { status: "completed" } });
  first.flush();
  expect(store.awaited).toEqual(["getSession", "createSession"]);

  // Another process's writer (its own), as a server opens one for the next turn.
  store.syncReads.length = 0;
  store.awaited.length = 0;
  const second = await SessionNodeWriter.open(store, "s1", { shared: false });
  await second.readAhead();
  expect(store.awaited).toEqual(["getSession", "head", "readAncestry"]);
  const head = second.head;
  expect(head).toBe("t1");
  second.catchUp(head);
  second.append({ id: "t2", role: "code", name: "A.run", caller: null, predecessor: head, metadata: { status: "running", renderRange: { turns: 20 } } });
  expect(second.historyGraph("t2", "t2").all().map((node) => node.id)).toEqual(["t1", "l1", "t2"]);
  // seq follows the session's, read by open.
  expect(second.graph().get("t2")?.seq).toBe(2);
  expect(store.syncReads).toEqual([]);
});

test("the head read ahead is used once; a commit of this writer makes it stale, so it is read again", async () => {
  const store = new CountingStore();
  store.createSession("s1");
  const writer = await SessionNodeWriter.open(store, "s1", { shared: false, batching: "manual" });
  await writer.readAhead();
  store.syncReads.length = 0;
  expect(writer.head).toBeNull();
  expect(store.syncReads).toEqual([]);
  expect(writer.head).toBeNull();
  expect(store.syncReads).toEqual(["head"]);

  await writer.readAhead();
  writer.append({ id: "t1", role: "code", name: "A.run", caller: null, predecessor: null });
  writer.flush();
  store.syncReads.length = 0;
  expect(writer.head).toBe("t1");
  expect(store.syncReads).toEqual(["head"]);
});

test("on a store without asyncReads, open creates a missing session synchronously and readAhead reads nothing", async () => {
  const store = new InMemorySessionStore();
  const writer = await SessionNodeWriter.open(store, "fresh");
  expect(store.hasSession("fresh")).toBe(true);
  await writer.readAhead();
  expect(writer.head).toBeNull();
  // The writer in use is handed out again.
  expect(await SessionNodeWriter.open(store, "fresh")).toBe(writer);
});
