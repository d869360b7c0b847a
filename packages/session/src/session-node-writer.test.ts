import { InMemorySessionStore } from "./in-memory-session-store";
import { SessionNodeWriter } from "./session-node-writer";
import { SessionStore } from "./session-store";
import type { SessionCommitResult, SessionStoreLike, SessionWriteOperation } from "./session-store-like";
import { SessionNodeNotFoundError } from "./session-errors";

/** Counts commits so tests can see batching. */
class CountingStore extends InMemorySessionStore {
  readonly commits: SessionWriteOperation[][] = [];
  failNext = false;
  override commit(sessionId: string, operations: readonly SessionWriteOperation[]): SessionCommitResult {
    if (this.failNext) {
      this.failNext = false;
      throw new Error("disk full");
    }
    this.commits.push([...operations]);
    return super.commit(sessionId, operations);
  }
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

let store: CountingStore;
beforeEach(() => {
  store = new CountingStore();
  store.createSession("s1");
});
afterEach(() => store.close());

test("writes in one tick are committed together in one transaction, after the tick", async () => {
  const writer = new SessionNodeWriter(store, "s1");
  writer.append({ id: "c", role: "code", name: "A.run", metadata: { status: "running" } });
  writer.append({ id: "l", role: "llm", name: "model", caller: "c" });
  writer.update("c", { output: 1, metadata: { status: "completed" } });
  expect(store.commits).toHaveLength(0);
  expect(writer.pending).toBe(2);
  await tick();
  expect(store.commits).toHaveLength(1);
  // The update of a queued append folds into it.
  expect(store.commits[0]!.map((operation) => operation.kind)).toEqual(["append", "append"]);
  expect(store.readNodes("s1")[0]).toMatchObject({ output: 1, metadata: { status: "completed" } });
});

test("flush commits synchronously; batching 'none' commits every write; 'manual' only on flush", async () => {
  const ticking = new SessionNodeWriter(store, "s1");
  ticking.append({ id: "a", role: "user", name: "user" });
  ticking.flush();
  expect(store.commits).toHaveLength(1);

  // Writers of their own: the session's shared writer has one batching.
  const eager = new SessionNodeWriter(store, "s1", { batching: "none", shared: false });
  eager.append({ id: "b", role: "user", name: "user" });
  eager.append({ id: "c", role: "user", name: "user" });
  expect(store.commits).toHaveLength(3);

  const manual = new SessionNodeWriter(store, "s1", { batching: "manual", shared: false });
  manual.append({ id: "d", role: "user", name: "user" });
  await tick();
  expect(store.commits).toHaveLength(3);
  manual.flush();
  expect(store.readNodes("s1").map((node) => node.id)).toEqual(["a", "b", "c", "d"]);
});

test("store.flush() commits every writer with a pending batch", () => {
  const one = new SessionNodeWriter(store, "s1", { batching: "manual" });
  store.createSession("s2");
  const two = new SessionNodeWriter(store, "s2", { batching: "manual" });
  one.append({ id: "a", role: "user", name: "user" });
  two.append({ id: "b", role: "user", name: "user" });
  store.flush();
  expect(store.getSession("s1").nodeCount + store.getSession("s2").nodeCount).toBe(2);
  expect(one.pending + two.pending).toBe(0);
});

test("seq and createdAt are filled in; seq continues from the stored session", () => {
  const writer = new SessionNodeWriter(store, "s1");
  const first = writer.append({ id: "a", role: "user", name: "user" });
  expect(first).toMatchObject({ seq: 0, caller: null, predecessor: null, metadata: {} });
  expect(typeof first.createdAt).toBe("number");
  writer.flush();
  // A writer of its own (as another process would have) continues from the store too.
  expect(new SessionNodeWriter(store, "s1", { shared: false }).append({ id: "b", role: "user", name: "user" }).seq).toBe(1);
  // Re-appending a queued id returns it with its original seq and queues nothing more.
  const c = writer.append({ id: "c", role: "user", name: "user" });
  expect(writer.append({ id: "c", role: "user", name: "user", input: "again" }).seq).toBe(c.seq);
  expect(writer.pending).toBe(1);
});

test("values are snapshotted as JSON when written; non-JSON values throw a TypeError at once", () => {
  const writer = new SessionNodeWriter(store, "s1");
  const input = { list: [1] };
  writer.append({ id: "a", role: "user", name: "user", input });
  input.list.push(2);
  writer.flush();
  expect(store.readNodes("s1")[0]!.input).toEqual({ list: [1] });
  const cyclic: Record<string, unknown> = {};
  cyclic["self"] = cyclic;
  expect(() => writer.append({ id: "b", role: "user", name: "user", input: cyclic })).toThrow(TypeError);
  expect(() => writer.update("a", { output: 10n })).toThrow(/Session node 'a' output is not JSON-serialisable/);
});

test("a node with expose 'hidden' is never stored", () => {
  const writer = new SessionNodeWriter(store, "s1");
  writer.append({ id: "h", role: "code", name: "A.secret", metadata: { expose: "hidden" } });
  writer.flush();
  expect(store.readNodes("s1")).toEqual([]);
});

test("updating an unknown node throws SessionNodeNotFoundError naming it", () => {
  const writer = new SessionNodeWriter(store, "s1");
  expect(() => writer.update("ghost", { output: 1 })).toThrow(SessionNodeNotFoundError);
  expect(() => writer.update("ghost", { output: 1 })).toThrow(/Node 'ghost' does not exist in session 's1'/);
});

test("consecutive updates of a committed node merge into one operation", () => {
  const writer = new SessionNodeWriter(store, "s1");
  writer.append({ id: "c", role: "code", name: "A.run", metadata: { status: "running", doc: "d" } });
  writer.flush();
  writer.update("c", { metadata: { status: "completed" } });
  writer.update("c", { output: "ok", metadata: { durationMs: 3 } });
  writer.flush();
  expect(store.commits[1]).toEqual([
    { kind: "update", id: "c", fields: { output: "ok", metadata: { status: "completed", durationMs: 3 } } },
  ]);
  expect(store.readNodes("s1")[0]!.metadata).toEqual({ status: "completed", doc: "d", durationMs: 3 });
});

test("head includes queued top-level appends", () => {
  const writer = new SessionNodeWriter(store, "s1", { batching: "manual" });
  expect(writer.head).toBeNull();
  writer.append({ id: "c", role: "code", name: "A.run" });
  writer.append({ id: "l", role: "llm", name: "model", caller: "c" });
  expect(writer.head).toBe("c");
  expect(store.head("s1")).toBeNull();
  writer.flush();
  expect(store.head("s1")).toBe("c");
});

test("a failed background commit keeps the batch and is thrown by the next flush, which retries", async () => {
  const writer = new SessionNodeWriter(store, "s1");
  store.failNext = true;
  writer.append({ id: "a", role: "user", name: "user" });
  await tick();
  expect(writer.pending).toBe(1);
  expect(store.readNodes("s1")).toEqual([]);
  writer.flush();
  expect(store.readNodes("s1").map((node) => node.id)).toEqual(["a"]);
  store.failNext = true;
  writer.append({ id: "b", role: "user", name: "user" });
  expect(() => writer.flush()).toThrow("disk full");
  writer.flush();
  expect(writer.pending).toBe(0);
});

test("load() commits the queue and returns the session graph", () => {
  const writer = new SessionNodeWriter(store as SessionStoreLike, "s1", { batching: "manual" });
  writer.append({ id: "c", role: "code", name: "A.run" });
  writer.append({ id: "l", role: "llm", name: "model", caller: "c" });
  const graph = writer.load();
  expect(graph.size).toBe(2);
  expect(graph.childrenOf("c").map((node) => node.id)).toEqual(["l"]);
});

describe("SessionNodeWriter history window", () => {
  /** Two turns on the spine, and a branch off the first that history at c2 must never read. */
  function twoTurnsAndABranch(): { store: InMemorySessionStore; writer: SessionNodeWriter } {
    const store = new InMemorySessionStore();
    store.createSession("g", {});
    const writer = new SessionNodeWriter(store, "g");
    writer.append({ id: "c1", role: "code", name: "A", metadata: { status: "completed" } });
    writer.append({ id: "l1", role: "llm", name: "m", caller: "c1" });
    writer.append({ id: "b", role: "code", name: "B", predecessor: "c1" });
    writer.append({ id: "bl", role: "llm", name: "m", caller: "b" });
    writer.append({ id: "c2", role: "code", name: "A", predecessor: "c1", metadata: { status: "running" } });
    writer.flush();
    return { store, writer };
  }

  it("reads the head's ancestry once (never the whole session), then takes this writer's appends and updates without another read", () => {
    const { store, writer } = twoTurnsAndABranch();
    const ancestry = jest.spyOn(store, "readAncestry");
    const whole = jest.spyOn(store, "readNodes");
    const graph = writer.historyGraph("c2", "c2");
    // One read for the call's renderRange (the call is committed, so not in the queue), one along its ancestry.
    expect(ancestry).toHaveBeenCalledTimes(2);
    expect(whole).not.toHaveBeenCalled();
    expect([...graph.nodes.keys()]).toEqual(["c1", "l1", "c2"]);
    writer.append({ id: "l2", role: "llm", name: "m", caller: "c2" });
    writer.update("c2", { output: 1, metadata: { status: "completed" } });
    expect(writer.historyGraph("l2", "c2")).toBe(graph);
    expect(ancestry).toHaveBeenCalledTimes(2);
    expect(graph.get("c2")).toMatchObject({ output: 1, metadata: { status: "completed" } });
    expect(graph.childrenOf("c2").map((n) => n.id)).toEqual(["l2"]);
  });

  it("reads the ancestry of a head that is still queued through its committed ancestors, without committing", () => {
    const { store, writer } = twoTurnsAndABranch();
    writer.append({ id: "c3", role: "code", name: "A", predecessor: "c2", metadata: { status: "running" } });
    writer.append({ id: "l3", role: "llm", name: "m", caller: "c3" });
    const commits = jest.spyOn(store, "commit");
    const graph = writer.historyGraph("l3", "c3");
    expect(commits).not.toHaveBeenCalled();
    expect([...graph.all()].map((n) => n.id)).toEqual(["c1", "l1", "c2", "c3", "l3"]);
  });

  it("renderRange.turns: only the last turns are read, and a later call that shows more turns reads again", () => {
    const { store, writer } = twoTurnsAndABranch();
    writer.append({ id: "c3", role: "code", name: "A", predecessor: "c2", metadata: { status: "running", renderRange: { turns: 2 } } });
    writer.flush();
    const ancestry = jest.spyOn(store, "readAncestry");
    expect([...writer.historyGraph("c3", "c3").all()].map((n) => n.id)).toEqual(["c2", "c3"]);
    expect(ancestry).toHaveBeenLastCalledWith("g", "c3", { turns: 2 });
    writer.append({ id: "c4", role: "code", name: "A", predecessor: "c3", metadata: { status: "running" } });
    expect([...writer.historyGraph("c4", "c4").all()].map((n) => n.id)).toEqual(["c1", "l1", "c2", "c3", "c4"]);
  });
});

describe("SessionNodeWriter.append with { owned: true }", () => {
  it("keeps handed-over values without a snapshot, and a file store serialises them on commit", () => {
    const store = new SessionStore({ path: ":memory:" });
    store.createSession("o", {});
    const writer = new SessionNodeWriter(store, "o");
    const output = { content: [{ type: "text", text: "hi" }] };
    const node = writer.append({ id: "l1", role: "llm", name: "m", output, metadata: { status: "completed" } }, { owned: true });
    expect(node.output).toBe(output);
    writer.flush();
    expect(store.readNodes("o")[0]).toMatchObject({ id: "l1", output: { content: [{ type: "text", text: "hi" }] } });
    store.close();
  });
});

describe("SessionNodeWriter idempotence without a list of ids or a lookup per append", () => {
  it("never asks the store per append: a re-appended stored id is dropped when its commit finds it taken, and the first version stays", () => {
    const writer = new SessionNodeWriter(store, "s1", { batching: "manual" });
    writer.append({ id: "a", role: "user", name: "user" });
    writer.flush();
    writer.append({ id: "b", role: "user", name: "user" });
    const lookups = jest.spyOn(store, "hasNode");
    writer.append({ id: "a", role: "user", name: "user", input: "second" });
    writer.append({ id: "c", role: "user", name: "user", predecessor: "b" });
    expect(lookups).not.toHaveBeenCalled();
    writer.flush();
    expect(writer.pending).toBe(0);
    const nodes = store.readNodes("s1");
    expect(nodes.map((node) => [node.id, node.input])).toEqual([
      ["a", undefined],
      ["b", undefined],
      ["c", undefined],
    ]);
    expect(nodes[0]!.seq).toBe(0);
    expect(nodes[1]!.seq).toBeLessThan(nodes[2]!.seq);
    expect(store.head("s1")).toBe("c");
  });

  it("a second writer re-appending an id the first committed stores nothing either; its other nodes go in", () => {
    const first = new SessionNodeWriter(store, "s1");
    first.append({ id: "a", role: "user", name: "user", input: "first" });
    first.flush();
    const second = new SessionNodeWriter(store, "s1", { shared: false });
    second.append({ id: "a", role: "code", name: "Other.run", input: "second" });
    second.append({ id: "b", role: "user", name: "user" });
    second.flush();
    expect(store.readNodes("s1").map((node) => [node.id, node.name, node.input])).toEqual([
      ["a", "user", "first"],
      ["b", "user", undefined],
    ]);
  });

  it("a batch past the scan limit still folds each update into its queued append", () => {
    const writer = new SessionNodeWriter(store, "s1", { batching: "manual" });
    const ids = Array.from({ length: 40 }, (_, index) => `c${index}`);
    for (const id of ids) writer.append({ id, role: "code", name: "A.run", metadata: { status: "running" } });
    for (const id of ids) writer.update(id, { output: id, metadata: { status: "completed" } });
    // A re-append inside the batch is recognised too.
    expect(writer.append({ id: "c3", role: "code", name: "A.run" }).seq).toBe(3);
    expect(writer.pending).toBe(40);
    writer.flush();
    expect(store.commits[0]!.every((operation) => operation.kind === "append")).toBe(true);
    expect(store.readNodes("s1").every((node) => node.output === node.id && node.metadata["status"] === "completed")).toBe(true);
  });
});

test("an update folded into a queued append removes the keys it sets to undefined", () => {
  const writer = new SessionNodeWriter(store, "s1", { batching: "manual" });
  writer.append({ id: "c", role: "code", name: "A.run", metadata: { status: "running", doc: "d", tries: 1 } });
  writer.update("c", { metadata: { doc: undefined, status: "completed" } });
  writer.flush();
  expect(store.readNodes("s1")[0]!.metadata).toEqual({ status: "completed", tries: 1 });
  expect(Object.keys(store.readNodes("s1")[0]!.metadata)).toEqual(["status", "tries"]);
});

test("flat values are copied, not shared: mutating them after append or update changes nothing stored", () => {
  const writer = new SessionNodeWriter(store, "s1", { batching: "manual" });
  const input = ["k1", 2];
  const metadata: Record<string, unknown> = { status: "running" };
  writer.append({ id: "c", role: "code", name: "A.run", input, metadata });
  const output = { value: "v" };
  const changes: Record<string, unknown> = { status: "completed" };
  writer.update("c", { output, metadata: changes });
  input.push("late");
  metadata["status"] = "mutated";
  output.value = "mutated";
  changes["status"] = "mutated";
  writer.flush();
  expect(store.readNodes("s1")[0]).toMatchObject({ input: ["k1", 2], output: { value: "v" }, metadata: { status: "completed" } });
});

test("writers leave the store's pending list once committed; store.flush() commits the others", () => {
  store.createSession("s2");
  store.createSession("s3");
  const writers = ["s1", "s2", "s3"].map((session) => new SessionNodeWriter(store, session, { batching: "manual" }));
  writers.forEach((writer, index) => writer.append({ id: `n${index}`, role: "user", name: "user" }));
  writers[1]!.flush();
  expect(store.commits).toHaveLength(1);
  store.flush();
  expect(store.commits).toHaveLength(3);
  store.flush();
  expect(store.commits).toHaveLength(3);
  writers[1]!.append({ id: "again", role: "user", name: "user" });
  store.flush();
  expect(store.commits).toHaveLength(4);
  expect(writers.map((writer) => writer.pending)).toEqual([0, 0, 0]);
});

test("a file store writes the text the writer made for nested values, and serialises what an update replaced", () => {
  const file = new SessionStore({ path: ":memory:" });
  file.createSession("j", {});
  const writer = new SessionNodeWriter(file, "j", { batching: "manual" });
  const node = writer.append({ id: "c", role: "code", name: "A.run", input: { query: { page: 1 } }, output: { draft: [1] } });
  writer.update("c", { output: { final: [2] } });
  const stringify = jest.spyOn(JSON, "stringify");
  writer.flush();
  const serialised = stringify.mock.calls.map(([value]) => value);
  stringify.mockRestore();
  expect(serialised).not.toContain(node.input);
  expect(serialised).toContainEqual({ final: [2] });
  expect(file.readNodes("j")[0]).toMatchObject({ input: { query: { page: 1 } }, output: { final: [2] } });
  file.close();
});
