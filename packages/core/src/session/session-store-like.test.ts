import { InMemorySessionStore } from "./in-memory-session-store";
import { SessionStore } from "./session-store";
import { SessionNodeWriter } from "./session-node-writer";
import type { SessionStoreLike } from "./session-store-like";
import { SessionExistsError, SessionNodeNotFoundError, SessionNotFoundError, SessionStoreClosedError } from "./session-errors";

// The contract every store keeps; run against both implementations.
describe.each<[string, () => SessionStoreLike]>([
  ["SessionStore(:memory:)", () => new SessionStore({ path: ":memory:" })],
  ["InMemorySessionStore", () => new InMemorySessionStore()],
])("%s", (_name, makeStore) => {
  let store: SessionStoreLike;
  beforeEach(() => {
    store = makeStore();
  });
  afterEach(() => store.close());

  test("createSession, getSession, listSessions, deleteSession", () => {
    const created = store.createSession("s1", { agentId: "Researcher", title: "Find sources" });
    expect(created).toMatchObject({ id: "s1", agentId: "Researcher", title: "Find sources", headId: null, nodeCount: 0, lastSeq: -1 });
    store.createSession("s2");
    expect(store.getSession("s2")).toMatchObject({ agentId: null, title: null });
    expect(store.listSessions().map((session) => session.id).sort()).toEqual(["s1", "s2"]);
    store.deleteSession("s1");
    expect(store.hasSession("s1")).toBe(false);
    expect(store.listSessions().map((session) => session.id)).toEqual(["s2"]);
  });

  test("a missing session id is a SessionNotFoundError naming the id", () => {
    expect(() => store.getSession("nope")).toThrow(SessionNotFoundError);
    expect(() => store.getSession("nope")).toThrow(/Session 'nope' does not exist .*createSession\('nope'/);
    expect(() => store.deleteSession("nope")).toThrow(SessionNotFoundError);
    expect(() => store.head("nope")).toThrow(SessionNotFoundError);
    expect(() => new SessionNodeWriter(store, "nope")).toThrow(SessionNotFoundError);
  });

  test("creating an existing session id throws SessionExistsError and keeps the session", () => {
    store.createSession("s1", { title: "first" });
    expect(() => store.createSession("s1", { title: "second" })).toThrow(SessionExistsError);
    expect(store.getSession("s1").title).toBe("first");
  });

  test("append is idempotent on id: the first version stays", () => {
    store.createSession("s1");
    const writer = new SessionNodeWriter(store, "s1");
    writer.append({ id: "a", role: "user", name: "user", input: "first" });
    writer.append({ id: "a", role: "user", name: "user", input: "second" });
    writer.flush();
    // A second writer (e.g. a resumed process) appending the same id is ignored too.
    const again = new SessionNodeWriter(store, "s1");
    again.append({ id: "a", role: "user", name: "user", input: "third" });
    again.flush();
    const nodes = store.readNodes("s1");
    expect(nodes).toHaveLength(1);
    expect(nodes[0]!.input).toBe("first");
    expect(store.getSession("s1").nodeCount).toBe(1);
  });

  test("update merges metadata and replaces output", () => {
    store.createSession("s1");
    const writer = new SessionNodeWriter(store, "s1");
    writer.append({ id: "c", role: "code", name: "A.run", metadata: { status: "running", doc: "Runs." } });
    writer.flush();
    writer.update("c", { output: 42, metadata: { status: "completed", durationMs: 5 } });
    writer.update("c", { metadata: { doc: undefined } });
    writer.flush();
    const [node] = store.readNodes("s1");
    expect(node!.output).toBe(42);
    expect(node!.metadata).toEqual({ status: "completed", durationMs: 5 });
  });

  test("a top-level append moves the head; two appends from the same head make two branches", () => {
    store.createSession("s1");
    const writer = new SessionNodeWriter(store, "s1");
    writer.append({ id: "u1", role: "user", name: "user", input: "hi" });
    writer.append({ id: "c1", role: "code", name: "A.ask", predecessor: "u1" });
    writer.append({ id: "l1", role: "llm", name: "model", caller: "c1" });
    writer.flush();
    expect(store.head("s1")).toBe("c1");
    writer.append({ id: "c2", role: "code", name: "A.ask", predecessor: "u1" });
    writer.flush();
    expect(store.head("s1")).toBe("c2");
    expect(store.listBranches("s1")).toEqual([
      expect.objectContaining({ tipId: "c1", length: 2, isHead: false }),
      expect.objectContaining({ tipId: "c2", length: 2, isHead: true }),
    ]);
    store.setHead("s1", "c1");
    expect(store.head("s1")).toBe("c1");
    expect(store.listBranches("s1").map((branch) => branch.isHead)).toEqual([true, false]);
  });

  test("setHead to an unknown node throws SessionNodeNotFoundError; null starts a new root", () => {
    store.createSession("s1");
    expect(() => store.setHead("s1", "ghost")).toThrow(SessionNodeNotFoundError);
    store.setHead("s1", null);
    expect(store.head("s1")).toBeNull();
  });

  test("exportGraph renders the mermaid flowchart of a small known run", () => {
    store.createSession("s1");
    const writer = new SessionNodeWriter(store, "s1");
    writer.append({ id: "u1", role: "user", name: "user", input: "Find sources" });
    writer.append({ id: "c1", role: "code", name: "Researcher.research", predecessor: "u1", metadata: { status: "running" } });
    writer.append({ id: "l1", role: "llm", name: "model-a", caller: "c1" });
    writer.append({ id: "c2", role: "code", name: "Wiki.search", caller: "c1", predecessor: "l1", metadata: { status: "completed" } });
    writer.append({ id: "l2", role: "llm", name: "model-a", caller: "c1", predecessor: "c2" });
    writer.update("c1", { metadata: { status: "completed" } });
    writer.flush();
    expect(store.exportGraph("s1", { format: "mermaid" })).toBe(
      [
        "flowchart TD",
        '  n0["user: user"]',
        '  n1["code: Researcher.research (completed)"]',
        '  n2["llm: model-a"]',
        '  n3["code: Wiki.search (completed)"]',
        '  n4["llm: model-a"]',
        "  n0 --> n1",
        "  n1 -.-> n2",
        "  n1 -.-> n3",
        "  n2 --> n3",
        "  n1 -.-> n4",
        "  n3 --> n4",
        "  classDef head stroke-width:3px",
        "  class n1 head",
        "",
      ].join("\n"),
    );
    const dot = store.exportGraph("s1", { format: "dot" });
    expect(dot).toContain('n1 [label="code: Researcher.research (completed)", penwidth=3];');
    expect(dot).toContain("n0 -> n1;");
    expect(dot).toContain("n1 -> n2 [style=dashed];");
    const json = JSON.parse(store.exportGraph("s1", { format: "json" })) as { session: { id: string }; nodes: unknown[] };
    expect(json.session.id).toBe("s1");
    expect(json.nodes).toHaveLength(5);
  });

  test("getSession returns a snapshot: later commits and setHead leave it as it was", () => {
    store.createSession("s1");
    const before = store.getSession("s1");
    const writer = new SessionNodeWriter(store, "s1");
    writer.append({ id: "a", role: "user", name: "user" });
    writer.flush();
    expect(before).toMatchObject({ headId: null, lastSeq: -1, nodeCount: 0 });
    const after = store.getSession("s1");
    expect(after).toMatchObject({ headId: "a", lastSeq: 0, nodeCount: 1 });
    store.setHead("s1", null);
    expect(after.headId).toBe("a");
    expect(store.getSession("s1").headId).toBeNull();
  });

  test("interruptRunning marks the store's running nodes interrupted", () => {
    store.createSession("s1");
    const writer = new SessionNodeWriter(store, "s1");
    writer.append({ id: "c", role: "code", name: "A.run", metadata: { status: "running" } });
    writer.append({ id: "d", role: "code", name: "A.run", metadata: { status: "completed" } });
    writer.flush();
    expect(store.interruptRunning()).toBe(1);
    expect(store.readNodes("s1").map((node) => node.metadata["status"])).toEqual(["interrupted", "completed"]);
  });

  test("close commits pending writes; a closed store throws SessionStoreClosedError", () => {
    store.createSession("s1");
    const writer = new SessionNodeWriter(store, "s1", { batching: "manual" });
    writer.append({ id: "a", role: "user", name: "user" });
    store.close();
    expect(() => store.listSessions()).toThrow(SessionStoreClosedError);
  });
});
