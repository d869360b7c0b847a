/// <reference types="jest" />
/**
 * The store contract, part two: commits, the head and branches, ancestry
 * (see `session-store-contract.ts`).
 * @internal
 */
import { SessionNodeWriter } from "./session-node-writer";
import type { SessionNode } from "./session-node";
import { SessionNodeConflictError, SessionNotFoundError } from "./session-errors";
import { node, append, thrownBy, type StoreUnderTest } from "./session-store-contract-helpers";
import { storableText } from "./storable-text";

/** Declares this part of the contract on the suite's store. @internal */
export function describeWritesContract(context: StoreUnderTest): void {
  describe("writes", () => {
    test("readNodes returns the committed nodes in seq order; hasNode knows them", () => {
      context.store.createSession("s1");
      context.store.commit("s1", [append(node("a", 0, { input: { q: [1, "two"] } })), append(node("b", 1, { caller: "a", role: "llm" }))]);
      const nodes = context.store.readNodes("s1");
      expect(nodes).toEqual([node("a", 0, { input: { q: [1, "two"] } }), node("b", 1, { caller: "a", role: "llm" })]);
      expect(context.store.hasNode("s1", "b")).toBe(true);
      expect(context.store.hasNode("s1", "c")).toBe(false);
      expect(context.store.getSession("s1")).toMatchObject({ nodeCount: 2, lastSeq: 1, headId: "a" });
    });

    test("text with a NUL or a lone surrogate (a sliced emoji in an error message) commits: read back as given, or with U+FFFD in their place where a database cannot keep it; later commits go on", () => {
      const odd = `no such document: ${"Hello😀 world".slice(0, 6)} and a NUL \u0000 here, \\u0000 kept as text, and 😀 whole`;
      context.store.createSession("s1", { title: odd });
      const writer = new SessionNodeWriter(context.store, "s1");
      writer.append({ id: "a", role: "code", name: `Tool.${odd}`, input: [odd], output: { [odd]: odd }, metadata: { status: "error", error: odd } });
      writer.flush();
      writer.update("a", { output: odd, metadata: { note: odd } });
      writer.append({ id: "b", role: "code", name: "A.next", predecessor: "a" });
      writer.flush();
      const kept = storableText(odd);
      expect(kept).toBe(`no such document: Hello\ufffd and a NUL \ufffd here, \\u0000 kept as text, and 😀 whole`);
      const [a, b] = context.store.readNodes("s1");
      // Each field as given, or as the database keeps it (SQLite keeps JSON content as given, not a text column).
      expect([`Tool.${odd}`, `Tool.${kept}`]).toContain(a!.name);
      expect([[odd], [kept]]).toContainEqual(a!.input);
      expect([odd, kept]).toContain(a!.output);
      expect([odd, kept]).toContain(a!.metadata["error"]);
      expect([odd, kept]).toContain(a!.metadata["note"]);
      expect([odd, kept]).toContain(context.store.getSession("s1").title);
      expect(b).toMatchObject({ id: "b", predecessor: "a" });
      expect(context.store.getSession("s1")).toMatchObject({ headId: "b", nodeCount: 2 });
    });

    test("an id holding a NUL or a lone surrogate is refused with a TypeError saying why, before anything is stored (two such ids could become one)", () => {
      for (const id of ["tenant\u0000alice", `a${"😀".slice(0, 1)}`]) {
        expect(thrownBy(() => context.store.createSession(id))).toMatchObject({ name: "TypeError", message: expect.stringContaining("NUL character or a lone UTF-16 surrogate") });
        expect(thrownBy(() => context.store.hasSession(id))).toMatchObject({ name: "TypeError" });
      }
      context.store.createSession("s1");
      expect(thrownBy(() => new SessionNodeWriter(context.store, "s1").append({ id: "n\u0000a", role: "code", name: "A.run" }))).toMatchObject({ name: "TypeError" });
      expect(context.store.listSessions().map((session) => session.id)).toEqual(["s1"]);
      expect(context.store.readNodes("s1")).toEqual([]);
    });

    test("a node read back is the caller's to change: changing it changes nothing stored (a resumed step's saved result stays as saved)", () => {
      context.store.createSession("s1");
      const writer = new SessionNodeWriter(context.store, "s1");
      writer.append({ id: "a", role: "code", name: "A.run", output: { items: [1, 2] }, metadata: { status: "completed", tags: ["x"] } });
      writer.flush();
      for (const read of [context.store.readNodes("s1")[0]!, context.store.readAncestry!("s1", "a")[0]!]) {
        (read.output as { items: number[] }).items.push(3);
        (read.metadata["tags"] as string[]).push("y");
      }
      expect(context.store.readNodes("s1")[0]).toMatchObject({ output: { items: [1, 2] }, metadata: { tags: ["x"] } });
    });

    test("append is idempotent on id: the first version stays", () => {
      context.store.createSession("s1");
      const writer = new SessionNodeWriter(context.store, "s1");
      writer.append({ id: "a", role: "user", name: "user", input: "first" });
      writer.append({ id: "a", role: "user", name: "user", input: "second" });
      writer.flush();
      // A writer of its own (e.g. a resumed process) appending the same id is ignored too.
      const again = new SessionNodeWriter(context.store, "s1", { shared: false });
      again.append({ id: "a", role: "user", name: "user", input: "third" });
      again.flush();
      const nodes = context.store.readNodes("s1");
      expect(nodes).toHaveLength(1);
      expect(nodes[0]!.input).toBe("first");
      expect(context.store.getSession("s1")).toMatchObject({ nodeCount: 1, lastSeq: 0 });
    });

    test("the same node committed again is ignored and gets no seq; another node under a taken id is a SessionNodeConflictError and nothing of its commit is stored", () => {
      context.store.createSession("s1");
      const a = node("a", 0, { input: "first" });
      context.store.commit("s1", [append(a)]);
      // A retry of a commit whose outcome was lost: same node (its values may have been updated since).
      const again = context.store.commit("s1", [append({ ...a, seq: 5, input: "retried" }), append(node("b", 6))]);
      expect(again.seqs.has("a")).toBe(false);
      expect(again.seqs.has("b")).toBe(true);
      let error: unknown;
      try {
        context.store.commit("s1", [append(node("c", 7)), append(node("a", 8, { name: "B.other" }))]);
      } catch (thrown) {
        error = thrown;
      }
      expect(SessionNodeConflictError.isInstance(error)).toBe(true);
      expect((error as SessionNodeConflictError).nodeId).toBe("a");
      expect(context.store.readNodes("s1").map((stored) => [stored.id, stored.input])).toEqual([
        ["a", "first"],
        ["b", undefined],
      ]);
      expect(context.store.hasNode("s1", "c")).toBe(false);
    });

    test("one new node twice in a single commit is stored once; the seq reported for it is the seq it was stored under, with no gap after it", () => {
      context.store.createSession("s1");
      const result = context.store.commit("s1", [append(node("a", 0)), append(node("a", 0)), append(node("b", 1))]);
      const stored = context.store.readNodes("s1");
      expect(stored.map((each) => each.id)).toEqual(["a", "b"]);
      expect(result.seqs.get("a")).toBe(stored[0]!.seq);
      expect(stored[1]!.seq).toBe(stored[0]!.seq + 1);
    });

    test("a writer's load() commits its queue and reads the session back as a graph", () => {
      context.store.createSession("s1");
      const writer = new SessionNodeWriter(context.store, "s1", { batching: "manual" });
      writer.append({ id: "c", role: "code", name: "A.run", input: { query: "q" }, metadata: { status: "running" } });
      writer.append({ id: "l", role: "llm", name: "model", caller: "c", output: { content: [] } });
      const graph = writer.load();
      expect(writer.pending).toBe(0);
      expect(graph.size).toBe(2);
      expect(graph.get("c")).toMatchObject({ input: { query: "q" }, metadata: { status: "running" } });
      expect(graph.childrenOf("c").map((stored) => stored.id)).toEqual(["l"]);
      expect(graph.spine("c").map((stored) => stored.id)).toEqual(["c"]);
    });

    test("update merges metadata and replaces output", () => {
      context.store.createSession("s1");
      const writer = new SessionNodeWriter(context.store, "s1");
      writer.append({ id: "c", role: "code", name: "A.run", metadata: { status: "running", doc: "Runs." } });
      writer.flush();
      writer.update("c", { output: 42, metadata: { status: "completed", durationMs: 5 } });
      writer.update("c", { metadata: { doc: undefined } });
      writer.flush();
      const [stored] = context.store.readNodes("s1");
      expect(stored!.output).toBe(42);
      expect(stored!.metadata).toEqual({ status: "completed", durationMs: 5 });
    });

    test("commit allocates seq: each appended node gets one above every seq in the session, and says which", () => {
      context.store.createSession("s1");
      const first = context.store.commit("s1", [append(node("a", 0)), append(node("b", 1, { caller: "a" }))]);
      expect([...first.seqs]).toEqual([
        ["a", 0],
        ["b", 1],
      ]);
      // A second writer proposing seqs already taken (as another process would) gets new ones.
      const second = context.store.commit("s1", [append(node("c", 0, { predecessor: "a" })), append(node("d", 1, { caller: "c" }))]);
      const c = second.seqs.get("c")!;
      const d = second.seqs.get("d")!;
      expect(c).toBeGreaterThan(1);
      expect(d).toBeGreaterThan(c);
      expect(context.store.readNodes("s1").map((stored) => [stored.id, stored.seq])).toEqual([
        ["a", 0],
        ["b", 1],
        ["c", c],
        ["d", d],
      ]);
      expect(context.store.getSession("s1").lastSeq).toBe(d);
      // An update-only commit appends nothing.
      expect(context.store.commit("s1", [{ kind: "update", id: "a", fields: { output: 1 } }]).seqs.size).toBe(0);
    });

    test("two writers of their own propose the same seqs; the context.store keeps every node with a distinct seq, and each writer's graph carries it", () => {
      context.store.createSession("s1");
      const one = new SessionNodeWriter(context.store, "s1", { batching: "manual", shared: false });
      const two = new SessionNodeWriter(context.store, "s1", { batching: "manual", shared: false });
      one.graph();
      two.graph();
      for (let index = 0; index < 5; index++) {
        one.append({ id: `one-${index}`, role: "code", name: "A.run" });
        two.append({ id: `two-${index}`, role: "code", name: "B.run" });
        one.flush();
        two.flush();
      }
      const nodes = context.store.readNodes("s1");
      const seqs = nodes.map((stored) => stored.seq);
      expect(nodes).toHaveLength(10);
      expect(new Set(seqs).size).toBe(10);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      for (const stored of nodes) {
        const writer = stored.id.startsWith("one") ? one : two;
        expect(writer.graph().get(stored.id)!.seq).toBe(stored.seq);
      }
    });
  });

  describe("head and branches", () => {
    test("a top-level append moves the head; two appends from the same head make two branches", () => {
      context.store.createSession("s1");
      const writer = new SessionNodeWriter(context.store, "s1");
      writer.append({ id: "u1", role: "user", name: "user", input: "hi" });
      writer.append({ id: "c1", role: "code", name: "A.ask", predecessor: "u1" });
      writer.append({ id: "l1", role: "llm", name: "model", caller: "c1" });
      writer.flush();
      expect(context.store.head("s1")).toBe("c1");
      writer.append({ id: "c2", role: "code", name: "A.ask", predecessor: "u1" });
      writer.flush();
      expect(context.store.head("s1")).toBe("c2");
      expect(context.store.listBranches("s1")).toEqual([
        expect.objectContaining({ tipId: "c1", length: 2, isHead: false }),
        expect.objectContaining({ tipId: "c2", length: 2, isHead: true }),
      ]);
      context.store.setHead("s1", "c1");
      expect(context.store.head("s1")).toBe("c1");
      expect(context.store.listBranches("s1").map((branch) => branch.isHead)).toEqual([true, false]);
    });

    test("a nested append leaves the head where it is; setHead to any node of the session", () => {
      context.store.createSession("s1");
      context.store.commit("s1", [append(node("c1", 0)), append(node("l1", 1, { caller: "c1", role: "llm" }))]);
      expect(context.store.head("s1")).toBe("c1");
      context.store.setHead("s1", "l1");
      expect(context.store.getSession("s1").headId).toBe("l1");
    });
  });

  describe("ancestry (history without reading the whole session)", () => {
    /**
     * Three turns t1 → t2 → t3 and a branch b2 off t1. Inside t1: l1, then
     * c1 (which made l2); inside t2: l3; inside t3: x, then y (which made z).
     */
    function threeTurns(): void {
      context.store.createSession("s1");
      context.store.commit("s1", [
        append(node("t1", 0)),
        append(node("l1", 1, { caller: "t1", role: "llm" })),
        append(node("c1", 2, { caller: "t1", predecessor: "l1" })),
        append(node("l2", 3, { caller: "c1", role: "llm" })),
        append(node("b2", 4, { predecessor: "t1" })),
        append(node("bl", 5, { caller: "b2", role: "llm" })),
        append(node("t2", 6, { predecessor: "t1" })),
        append(node("l3", 7, { caller: "t2", role: "llm" })),
        append(node("t3", 8, { predecessor: "t2" })),
        append(node("x", 9, { caller: "t3" })),
        append(node("y", 10, { caller: "t3", predecessor: "x" })),
        append(node("z", 11, { caller: "y", role: "llm" })),
      ]);
    }
    const ids = (nodes: readonly SessionNode[]): string[] => nodes.map((found) => found.id);

    test("readAncestry gives the caller chain, the spines and their call subtrees, in seq order; never another branch", () => {
      threeTurns();
      expect(ids(context.store.readAncestry("s1", "z"))).toEqual(["t1", "l1", "c1", "l2", "t2", "l3", "t3", "x", "y", "z"]);
      expect(ids(context.store.readAncestry("s1", "bl"))).toEqual(["t1", "l1", "c1", "l2", "b2", "bl"]);
      // The nodes carry every field, as readNodes gives them.
      expect(context.store.readAncestry("s1", "c1")).toEqual(context.store.readNodes("s1").filter((found) => ["t1", "l1", "c1", "l2"].includes(found.id)));
    });

    test("turns bounds the conversation spine; an unknown node gives []; an unknown session throws", () => {
      threeTurns();
      expect(ids(context.store.readAncestry("s1", "z", { turns: 2 }))).toEqual(["t2", "l3", "t3", "x", "y", "z"]);
      expect(ids(context.store.readAncestry("s1", "z", { turns: 1 }))).toEqual(["t3", "x", "y", "z"]);
      expect(ids(context.store.readAncestry("s1", "t2", { turns: Infinity }))).toEqual(["t1", "l1", "c1", "l2", "t2", "l3"]);
      expect(context.store.readAncestry("s1", "nope")).toEqual([]);
      expect(() => context.store.readAncestry("missing", "z")).toThrow(SessionNotFoundError);
      expect(() => context.store.readAncestry("s1", "z", { turns: 0 })).toThrow(/turns.*positive integer or Infinity/);
    });

    test("readAncestry ends on cyclic links in damaged data", () => {
      context.store.createSession("s1");
      context.store.commit("s1", [append(node("a", 0, { predecessor: "b" })), append(node("b", 1, { predecessor: "a" })), append(node("c", 2, { caller: "c" }))]);
      expect(ids(context.store.readAncestry("s1", "b"))).toEqual(["a", "b"]);
      expect(ids(context.store.readAncestry("s1", "c"))).toEqual(["c"]);
    });
  });
}
