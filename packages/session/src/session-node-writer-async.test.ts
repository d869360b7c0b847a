/**
 * The writer on a store with `commitAsync` (the Postgres store's
 * `asyncWrites`), against an in-memory store given an asynchronous commit:
 * commits never overlap and keep the order written, failures are kept,
 * reported once and retried, and a batch that keeps failing never holds
 * back later writes — the sync path's rules, on the async path.
 */
import { InMemorySessionStore } from "./in-memory-session-store";
import { SessionNodeWriter } from "./session-node-writer";
import type { SessionCommitFailure } from "./commit-failure";
import type { SessionCommitOptions, SessionCommitResult, SessionWriteOperation } from "./session-store-like";

/** An in-memory store whose `commitAsync` encodes the operations when called and applies them a turn later. */
class AsyncStore extends InMemorySessionStore {
  /** A commit holding an operation on one of these ids fails (the whole commit). */
  readonly failing = new Set<string>();
  /** The ids of each commit that went in, in order. */
  readonly committed: string[][] = [];
  inFlight = 0;
  maxInFlight = 0;
  /** Set, the commits in flight fail when they settle, as on a connection the store closed. */
  closedInFlight = false;

  readonly commitAsync = async (sessionId: string, operations: readonly SessionWriteOperation[], options?: SessionCommitOptions): Promise<SessionCommitResult> => {
    const encoded = structuredClone(operations) as SessionWriteOperation[];
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    try {
      await new Promise((resolve) => setImmediate(resolve));
      if (this.closedInFlight) throw new Error("connection closed");
      const ids = encoded.map((operation) => (operation.kind === "append" ? operation.node.id : operation.id));
      const failed = ids.find((id) => this.failing.has(id));
      if (failed !== undefined) throw new Error(`refused ${failed}`);
      const result = this.commit(sessionId, encoded, options);
      this.committed.push(ids);
      return result;
    } finally {
      this.inFlight--;
    }
  };
}

let store: AsyncStore;
beforeEach(() => {
  store = new AsyncStore();
  store.createSession("s1");
});
afterEach(() => store.close());

const ids = (): string[] => store.readNodes("s1").map((node) => node.id);

test("commits never overlap: what is written while one is in flight goes in the next, in order; flushAsync resolves once all is stored", async () => {
  const writer = new SessionNodeWriter(store, "s1", { batching: "manual" });
  const a = writer.append({ id: "a", role: "code", name: "A.run", metadata: { status: "running" } });
  writer.flush(); // starts the commit of "a"; it is not stored yet
  expect(ids()).toEqual([]);
  // In flight: known to the writer, appended again it is the same node, and nothing more is queued.
  expect(writer.has("a")).toBe(true);
  expect(writer.append({ id: "a", role: "code", name: "A.run", input: "again" }).seq).toBe(a.seq);
  expect(writer.graph().get("a")?.metadata).toEqual({ status: "running" });
  writer.update("a", { output: "done", metadata: { status: "completed" } });
  writer.append({ id: "b", role: "code", name: "B.run", predecessor: "a" });
  await writer.flushAsync();
  expect(store.maxInFlight).toBe(1);
  expect(store.committed).toEqual([["a"], ["a", "b"]]);
  expect(store.readNodes("s1").map((node) => [node.id, node.seq, node.output, node.metadata["status"]])).toEqual([
    ["a", 0, "done", "completed"],
    ["b", 1, undefined, undefined],
  ]);
  expect(writer.pending).toBe(0);
  expect(writer.head).toBe("b");
  expect(store.head("s1")).toBe("b");
});

test("a failed commit is kept, reported once and thrown by flushAsync; later writes go in on their own; the retry stores the kept ones and the newer node stays the head", async () => {
  const failures: SessionCommitFailure[] = [];
  const writer = new SessionNodeWriter(store, "s1", { batching: "manual", onCommitError: (failure) => failures.push(failure) });
  store.failing.add("k");
  writer.append({ id: "k", role: "code", name: "K.run" });
  await expect(writer.flushAsync()).rejects.toThrow("refused k");
  expect(writer.pending).toBe(1);
  expect(failures.map((failure) => [failure.sessionId, failure.pending, (failure.error as Error).message])).toEqual([["s1", 1, "refused k"]]);

  // The kept "k" fails again; "n", written after it, is committed alone.
  writer.append({ id: "n", role: "code", name: "N.run" });
  await expect(writer.flushAsync()).rejects.toThrow("refused k");
  expect(ids()).toEqual(["n"]);
  expect(writer.pending).toBe(1);
  expect(failures).toHaveLength(1);

  store.failing.clear();
  await writer.flushAsync();
  expect(ids()).toEqual(["n", "k"]);
  expect(writer.pending).toBe(0);
  // "n" was written after "k": committing "k" late does not take the head from it.
  expect(store.head("s1")).toBe("n");
  expect(writer.head).toBe("n");
  expect(failures).toHaveLength(1);
});

test("with batching 'tick', a failed commit is retried from a timer once the fault clears, with nothing else written", async () => {
  const failures: SessionCommitFailure[] = [];
  const writer = new SessionNodeWriter(store, "s1", { onCommitError: (failure) => failures.push(failure) });
  store.failing.add("k");
  writer.append({ id: "k", role: "code", name: "K.run" });
  while (failures.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  store.failing.clear();
  while (writer.pending > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(ids()).toEqual(["k"]);
  expect(failures).toHaveLength(1);
});

test("a node committed on its own while older ones stay kept is no longer pending: head follows the store's, as on the sync path", async () => {
  const writer = new SessionNodeWriter(store, "s1", { batching: "manual", onCommitError: () => {} });
  store.failing.add("k");
  writer.append({ id: "k", role: "code", name: "K.run" });
  await expect(writer.flushAsync()).rejects.toThrow("refused k");
  writer.append({ id: "n", role: "code", name: "N.run" });
  await expect(writer.flushAsync()).rejects.toThrow("refused k");
  expect(ids()).toEqual(["n"]);
  // Another writer (as another process would have) moves the session on.
  const other = new SessionNodeWriter(store, "s1", { shared: false, batching: "manual" });
  other.append({ id: "o", role: "code", name: "O.run", predecessor: "n" });
  await other.flushAsync();
  expect(store.head("s1")).toBe("o");
  expect(writer.head).toBe("o");
  store.failing.clear();
  await writer.flushAsync();
  expect(writer.pending).toBe(0);
});

test("flushSync commits on the sync path the commit in flight and the writes queued behind it, in order; the abandoned commit failing later changes nothing", async () => {
  const failures: SessionCommitFailure[] = [];
  const writer = new SessionNodeWriter(store, "s1", { batching: "manual", onCommitError: (failure) => failures.push(failure) });
  writer.append({ id: "a", role: "code", name: "A.run", metadata: { status: "running" } });
  writer.flush(); // in flight on the async path
  writer.update("a", { output: "done", metadata: { status: "completed" } });
  writer.append({ id: "b", role: "code", name: "B.run", predecessor: "a" });
  // As a store that is closing: its commits in flight are abandoned (their connection closed), then flushSync.
  store.closedInFlight = true;
  writer.flushSync();
  const stored = () => store.readNodes("s1").map((node) => [node.id, node.seq, node.output, node.metadata["status"]]);
  expect(stored()).toEqual([
    ["a", 0, "done", "completed"],
    ["b", 1, undefined, undefined],
  ]);
  expect(writer.pending).toBe(0);
  expect(store.head("s1")).toBe("b");

  // The abandoned commit fails when it settles: nothing is kept, retried or reported.
  while (store.inFlight > 0) await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  expect(store.committed).toEqual([]);
  expect(failures).toEqual([]);
  expect(writer.pending).toBe(0);

  // The writer goes on, on the async path.
  store.closedInFlight = false;
  writer.append({ id: "c", role: "code", name: "C.run", predecessor: "b" });
  await writer.flushAsync();
  expect(ids()).toEqual(["a", "b", "c"]);
  expect(store.committed).toEqual([["c"]]);
});
