/// <reference types="jest" />
/**
 * The contract every session store keeps, as one jest suite:
 * `describeSessionStoreContract(name, makeStore)` runs it against a store
 * made fresh for each test. The in-memory and SQLite stores run it
 * (`session-store-like.test.ts`); a store of another package runs it from
 * its own test file (docs/writing-a-session-store.md):
 *
 * ```ts
 * import { describeSessionStoreContract } from "@rein/session";
 * describeSessionStoreContract("PostgresSessionStore", () => new PostgresSessionStore({ pool, schema: freshSchema() }));
 * ```
 *
 * It calls jest's globals (`describe`, `test`, `expect`, `beforeEach`,
 * `afterEach`) when called, so call it from a test file only; loading the
 * module outside a test costs nothing.
 */
import { SessionNodeWriter } from "./session-node-writer";
import type { SessionNode } from "./session-node";
import { isRunLeaseStore, type RunLeaseStore } from "./run-leases";
import type { SessionStoreLike, SessionWriteOperation } from "./session-store-like";
import {
  LeaseLostError,
  SessionExistsError,
  SessionNodeConflictError,
  SessionNodeNotFoundError,
  SessionNotFoundError,
  SessionStoreClosedError,
  SessionStoreError,
} from "./session-errors";

/** A node literal for raw `commit` calls. */
function node(id: string, seq: number, fields: Partial<SessionNode> = {}): SessionNode {
  return {
    id,
    seq,
    createdAt: 1_000 + seq,
    role: "code",
    name: "A.run",
    input: undefined,
    output: undefined,
    caller: null,
    predecessor: null,
    metadata: {},
    ...fields,
  };
}

const append = (appended: SessionNode): SessionWriteOperation => ({ kind: "append", node: appended });

/** What `call` threw (the test fails when it throws nothing). */
function thrownBy(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to throw");
}

/**
 * Declares the store contract suite for `makeStore`, which returns a new,
 * empty store each time (closed by the suite after each test). Call it at
 * the top level of a jest test file.
 *
 * @example
 * ```ts
 * import { describeSessionStoreContract } from "@rein/session";
 * describeSessionStoreContract("MyStore", () => new MyStore({ path: freshPath() }));
 * ```
 */
export function describeSessionStoreContract(name: string, makeStore: () => SessionStoreLike | Promise<SessionStoreLike>): void {
  describe(`${name} keeps the session store contract`, () => {
    let store: SessionStoreLike;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(() => store.close());

    describe("sessions", () => {
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

      test("listSessions puts the most recently updated first", async () => {
        store.createSession("old");
        await new Promise((resolve) => setTimeout(resolve, 5));
        store.createSession("new");
        expect(store.listSessions().map((session) => session.id)).toEqual(["new", "old"]);
        await new Promise((resolve) => setTimeout(resolve, 5));
        store.commit("old", [append(node("a", 0))]);
        expect(store.listSessions().map((session) => session.id)).toEqual(["old", "new"]);
      });

      test("a deleted session takes its nodes with it; its id can be created again, empty", () => {
        store.createSession("s1");
        store.commit("s1", [append(node("a", 0))]);
        store.deleteSession("s1");
        store.createSession("s1");
        expect(store.getSession("s1")).toMatchObject({ nodeCount: 0, lastSeq: -1, headId: null });
        expect(store.hasNode("s1", "a")).toBe(false);
        expect(store.readNodes("s1")).toEqual([]);
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
    });

    describe("session ids", () => {
      test("an id that is not a non-empty string of at most 256 characters is a TypeError saying what to use; nothing is created", () => {
        for (const id of [undefined, null, 42, "", "x".repeat(257), "x".repeat(1 << 20)]) {
          expect(() => store.createSession(id as string)).toThrow(TypeError);
        }
        expect(() => store.createSession("x".repeat(1 << 20))).toThrow(
          /createSession argument id: "x{10,}…" — a session id is at most 256 characters, this one has 1048576: use a shorter id \(a UUID, or a hash of a longer key\)/,
        );
        expect(() => store.createSession(undefined as unknown as string)).toThrow(/argument id: undefined — expected a non-empty string/);
        expect(store.listSessions()).toEqual([]);
        expect(store.createSession("y".repeat(256)).id).toBe("y".repeat(256));
      });

      test("any other text is an id stored and read back verbatim: __proto__, constructor, SQL-like text, quotes, unicode", () => {
        const ids = ["__proto__", "constructor", "toString", "'; DROP TABLE rein_sessions; --", 'a"b\\c', "%ZZ/../x", "セッション 🧵"];
        for (const id of ids) {
          expect(store.createSession(id).id).toBe(id);
          store.commit(id, [append(node(`n-${ids.indexOf(id)}`, 0, { input: id }))]);
        }
        expect(store.listSessions().map((session) => session.id).sort()).toEqual([...ids].sort());
        for (const [index, id] of ids.entries()) {
          expect(store.hasSession(id)).toBe(true);
          expect(store.getSession(id)).toMatchObject({ id, nodeCount: 1, headId: `n-${index}` });
          expect(store.readNodes(id).map((stored) => [stored.id, stored.input])).toEqual([[`n-${index}`, id]]);
        }
        expect(() => store.createSession("__proto__")).toThrow(SessionExistsError);
        store.deleteSession("__proto__");
        expect(store.hasSession("__proto__")).toBe(false);
        expect(store.hasSession("constructor")).toBe(true);
        expect(store.listSessions()).toHaveLength(ids.length - 1);
      });
    });

    describe("typed errors", () => {
      test("a missing session id is a SessionNotFoundError naming the id", () => {
        const calls: (() => unknown)[] = [
          () => store.getSession("nope"),
          () => store.deleteSession("nope"),
          () => store.head("nope"),
          () => store.setHead("nope", null),
          () => store.listBranches("nope"),
          () => store.readNodes("nope"),
          () => store.exportGraph("nope"),
          () => store.commit("nope", [append(node("x", 0))]),
          () => new SessionNodeWriter(store, "nope"),
        ];
        for (const call of calls) {
          let error: unknown;
          try {
            call();
          } catch (thrown) {
            error = thrown;
          }
          expect(SessionNotFoundError.isInstance(error)).toBe(true);
          expect((error as SessionNotFoundError).sessionId).toBe("nope");
        }
        expect(() => store.getSession("nope")).toThrow(/Session 'nope' does not exist .*createSession\('nope'/);
        expect(store.hasSession("nope")).toBe(false);
      });

      test("creating an existing session id throws SessionExistsError and keeps the session", () => {
        store.createSession("s1", { title: "first" });
        let error: unknown;
        try {
          store.createSession("s1", { title: "second" });
        } catch (thrown) {
          error = thrown;
        }
        expect(SessionExistsError.isInstance(error)).toBe(true);
        expect((error as SessionExistsError).sessionId).toBe("s1");
        expect(store.getSession("s1").title).toBe("first");
      });

      test("setHead to an unknown node throws SessionNodeNotFoundError; null starts a new root", () => {
        store.createSession("s1");
        expect(() => store.setHead("s1", "ghost")).toThrow(SessionNodeNotFoundError);
        store.setHead("s1", null);
        expect(store.head("s1")).toBeNull();
      });

      test("close commits pending writes; a closed store throws SessionStoreClosedError; close twice is fine", () => {
        store.createSession("s1");
        const writer = new SessionNodeWriter(store, "s1", { batching: "manual" });
        writer.append({ id: "a", role: "user", name: "user" });
        store.close();
        expect(writer.pending).toBe(0);
        const calls: (() => unknown)[] = [
          () => store.listSessions(),
          () => store.getSession("s1"),
          () => store.createSession("s2"),
          () => store.readNodes("s1"),
          () => store.commit("s1", [append(node("b", 1))]),
        ];
        for (const call of calls) expect(call).toThrow(SessionStoreClosedError);
        expect(() => store.close()).not.toThrow();
      });
    });

    describe("writes", () => {
      test("readNodes returns the committed nodes in seq order; hasNode knows them", () => {
        store.createSession("s1");
        store.commit("s1", [append(node("a", 0, { input: { q: [1, "two"] } })), append(node("b", 1, { caller: "a", role: "llm" }))]);
        const nodes = store.readNodes("s1");
        expect(nodes).toEqual([node("a", 0, { input: { q: [1, "two"] } }), node("b", 1, { caller: "a", role: "llm" })]);
        expect(store.hasNode("s1", "b")).toBe(true);
        expect(store.hasNode("s1", "c")).toBe(false);
        expect(store.getSession("s1")).toMatchObject({ nodeCount: 2, lastSeq: 1, headId: "a" });
      });

      test("append is idempotent on id: the first version stays", () => {
        store.createSession("s1");
        const writer = new SessionNodeWriter(store, "s1");
        writer.append({ id: "a", role: "user", name: "user", input: "first" });
        writer.append({ id: "a", role: "user", name: "user", input: "second" });
        writer.flush();
        // A writer of its own (e.g. a resumed process) appending the same id is ignored too.
        const again = new SessionNodeWriter(store, "s1", { shared: false });
        again.append({ id: "a", role: "user", name: "user", input: "third" });
        again.flush();
        const nodes = store.readNodes("s1");
        expect(nodes).toHaveLength(1);
        expect(nodes[0]!.input).toBe("first");
        expect(store.getSession("s1")).toMatchObject({ nodeCount: 1, lastSeq: 0 });
      });

      test("the same node committed again is ignored and gets no seq; another node under a taken id is a SessionNodeConflictError and nothing of its commit is stored", () => {
        store.createSession("s1");
        const a = node("a", 0, { input: "first" });
        store.commit("s1", [append(a)]);
        // A retry of a commit whose outcome was lost: same node (its values may have been updated since).
        const again = store.commit("s1", [append({ ...a, seq: 5, input: "retried" }), append(node("b", 6))]);
        expect(again.seqs.has("a")).toBe(false);
        expect(again.seqs.has("b")).toBe(true);
        let error: unknown;
        try {
          store.commit("s1", [append(node("c", 7)), append(node("a", 8, { name: "B.other" }))]);
        } catch (thrown) {
          error = thrown;
        }
        expect(SessionNodeConflictError.isInstance(error)).toBe(true);
        expect((error as SessionNodeConflictError).nodeId).toBe("a");
        expect(store.readNodes("s1").map((stored) => [stored.id, stored.input])).toEqual([
          ["a", "first"],
          ["b", undefined],
        ]);
        expect(store.hasNode("s1", "c")).toBe(false);
      });

      test("a writer's load() commits its queue and reads the session back as a graph", () => {
        store.createSession("s1");
        const writer = new SessionNodeWriter(store, "s1", { batching: "manual" });
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
        store.createSession("s1");
        const writer = new SessionNodeWriter(store, "s1");
        writer.append({ id: "c", role: "code", name: "A.run", metadata: { status: "running", doc: "Runs." } });
        writer.flush();
        writer.update("c", { output: 42, metadata: { status: "completed", durationMs: 5 } });
        writer.update("c", { metadata: { doc: undefined } });
        writer.flush();
        const [stored] = store.readNodes("s1");
        expect(stored!.output).toBe(42);
        expect(stored!.metadata).toEqual({ status: "completed", durationMs: 5 });
      });

      test("commit allocates seq: each appended node gets one above every seq in the session, and says which", () => {
        store.createSession("s1");
        const first = store.commit("s1", [append(node("a", 0)), append(node("b", 1, { caller: "a" }))]);
        expect([...first.seqs]).toEqual([
          ["a", 0],
          ["b", 1],
        ]);
        // A second writer proposing seqs already taken (as another process would) gets new ones.
        const second = store.commit("s1", [append(node("c", 0, { predecessor: "a" })), append(node("d", 1, { caller: "c" }))]);
        const c = second.seqs.get("c")!;
        const d = second.seqs.get("d")!;
        expect(c).toBeGreaterThan(1);
        expect(d).toBeGreaterThan(c);
        expect(store.readNodes("s1").map((stored) => [stored.id, stored.seq])).toEqual([
          ["a", 0],
          ["b", 1],
          ["c", c],
          ["d", d],
        ]);
        expect(store.getSession("s1").lastSeq).toBe(d);
        // An update-only commit appends nothing.
        expect(store.commit("s1", [{ kind: "update", id: "a", fields: { output: 1 } }]).seqs.size).toBe(0);
      });

      test("two writers of their own propose the same seqs; the store keeps every node with a distinct seq, and each writer's graph carries it", () => {
        store.createSession("s1");
        const one = new SessionNodeWriter(store, "s1", { batching: "manual", shared: false });
        const two = new SessionNodeWriter(store, "s1", { batching: "manual", shared: false });
        one.graph();
        two.graph();
        for (let index = 0; index < 5; index++) {
          one.append({ id: `one-${index}`, role: "code", name: "A.run" });
          two.append({ id: `two-${index}`, role: "code", name: "B.run" });
          one.flush();
          two.flush();
        }
        const nodes = store.readNodes("s1");
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

      test("a nested append leaves the head where it is; setHead to any node of the session", () => {
        store.createSession("s1");
        store.commit("s1", [append(node("c1", 0)), append(node("l1", 1, { caller: "c1", role: "llm" }))]);
        expect(store.head("s1")).toBe("c1");
        store.setHead("s1", "l1");
        expect(store.getSession("s1").headId).toBe("l1");
      });
    });

    describe("ancestry (history without reading the whole session)", () => {
      /**
       * Three turns t1 → t2 → t3 and a branch b2 off t1. Inside t1: l1, then
       * c1 (which made l2); inside t2: l3; inside t3: x, then y (which made z).
       */
      function threeTurns(): void {
        store.createSession("s1");
        store.commit("s1", [
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
        expect(ids(store.readAncestry("s1", "z"))).toEqual(["t1", "l1", "c1", "l2", "t2", "l3", "t3", "x", "y", "z"]);
        expect(ids(store.readAncestry("s1", "bl"))).toEqual(["t1", "l1", "c1", "l2", "b2", "bl"]);
        // The nodes carry every field, as readNodes gives them.
        expect(store.readAncestry("s1", "c1")).toEqual(store.readNodes("s1").filter((found) => ["t1", "l1", "c1", "l2"].includes(found.id)));
      });

      test("turns bounds the conversation spine; an unknown node gives []; an unknown session throws", () => {
        threeTurns();
        expect(ids(store.readAncestry("s1", "z", { turns: 2 }))).toEqual(["t2", "l3", "t3", "x", "y", "z"]);
        expect(ids(store.readAncestry("s1", "z", { turns: 1 }))).toEqual(["t3", "x", "y", "z"]);
        expect(ids(store.readAncestry("s1", "t2", { turns: Infinity }))).toEqual(["t1", "l1", "c1", "l2", "t2", "l3"]);
        expect(store.readAncestry("s1", "nope")).toEqual([]);
        expect(() => store.readAncestry("missing", "z")).toThrow(SessionNotFoundError);
        expect(() => store.readAncestry("s1", "z", { turns: 0 })).toThrow(/turns.*positive integer or Infinity/);
      });

      test("readAncestry ends on cyclic links in damaged data", () => {
        store.createSession("s1");
        store.commit("s1", [append(node("a", 0, { predecessor: "b" })), append(node("b", 1, { predecessor: "a" })), append(node("c", 2, { caller: "c" }))]);
        expect(ids(store.readAncestry("s1", "b"))).toEqual(["a", "b"]);
        expect(ids(store.readAncestry("s1", "c"))).toEqual(["c"]);
      });
    });

    describe("run leases (resumable runs)", () => {
      const leases = (): RunLeaseStore => {
        expect(isRunLeaseStore(store)).toBe(true);
        return store as unknown as RunLeaseStore;
      };

      test("registerRun records a running run owned under a lease; getRun and listRuns (oldest first, narrowed by state) show it", () => {
        store.createSession("s1");
        const runs = leases();
        const before = Date.now();
        runs.registerRun("run-a", "s1", "Job.run", 30_000);
        runs.registerRun("run-b", "s1", "Job.other", 30_000);
        expect(runs.getRun("run-a")).toMatchObject({ runId: "run-a", sessionId: "s1", name: "Job.run", state: "running", reason: null, owned: true });
        expect(runs.getRun("run-a")!.leaseUntil!).toBeGreaterThanOrEqual(before + 30_000);
        expect(runs.listRuns().map((run) => run.runId)).toEqual(["run-a", "run-b"]);
        expect(runs.listRuns(["completed"])).toEqual([]);
        expect(runs.getRun("no-such-run")).toBeUndefined();
        expect(runs.claimRun("no-such-run", ["running"], 1_000)).toBe(false);
      });

      test("the holder renews its lease; a release records the state and reason and frees the lease; a live lease cannot be claimed", () => {
        store.createSession("s1");
        const runs = leases();
        runs.registerRun("run-a", "s1", "Job.run", 30_000);
        expect(runs.claimRun("run-a", ["running"], 30_000)).toBe(false);
        expect(runs.renewRun("run-a", 60_000)).toBe(true);
        expect(runs.getRun("run-a")!.leaseUntil!).toBeGreaterThan(Date.now() + 30_000);
        runs.releaseRun("run-a", "paused", JSON.stringify({ kind: "pause", message: "asked to pause" }));
        expect(runs.getRun("run-a")).toMatchObject({ state: "paused", owned: false, leaseUntil: null, reason: '{"kind":"pause","message":"asked to pause"}' });
        expect(runs.renewRun("run-a", 30_000)).toBe(false);
        expect(runs.listRuns(["paused", "interrupted"]).map((run) => run.runId)).toEqual(["run-a"]);
        // A claim takes the run only from one of the states it names.
        expect(runs.claimRun("run-a", ["interrupted"], 30_000)).toBe(false);
        expect(runs.claimRun("run-a", ["paused"], 30_000)).toBe(true);
        expect(runs.getRun("run-a")).toMatchObject({ state: "running", owned: true, reason: null });
      });

      test("an expired lease can be claimed", async () => {
        store.createSession("s1");
        const runs = leases();
        runs.registerRun("run-a", "s1", "Job.run", 1);
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(runs.claimRun("run-a", ["running"], 30_000)).toBe(true);
        expect(runs.getRun("run-a")!.leaseUntil!).toBeGreaterThan(Date.now() + 20_000);
      });

      test("deleteSession deletes the session's runs; bad arguments are TypeErrors", () => {
        store.createSession("s1");
        store.createSession("s2");
        const runs = leases();
        runs.registerRun("run-a", "s1", "Job.run", 30_000);
        runs.registerRun("run-b", "s2", "Job.run", 30_000);
        store.deleteSession("s1");
        expect(runs.listRuns().map((run) => run.runId)).toEqual(["run-b"]);
        expect(() => runs.registerRun("", "s2", "Job.run", 30_000)).toThrow(TypeError);
        expect(() => runs.claimRun("run-b", ["running"], -1)).toThrow(TypeError);
        expect(() => runs.listRuns(["finished" as never])).toThrow(TypeError);
      });
    });

    describe("lease fencing (writes of a resumable run carry its lease's epoch)", () => {
      const leases = (): RunLeaseStore => {
        expect(isRunLeaseStore(store)).toBe(true);
        return store as unknown as RunLeaseStore;
      };
      /** Run `run-a` of session s1 with its node and one step node; worker A registered it (epoch 1), worker B claimed it (epoch 2). */
      const takenOver = (): RunLeaseStore => {
        store.createSession("s1");
        const runs = leases();
        store.commit("s1", [append(node("run-a", 0, { metadata: { status: "running" } })), append(node("step", 1, { caller: "run-a", metadata: { status: "running" } }))]);
        runs.registerRun("run-a", "s1", "Job.run", 30_000);
        runs.releaseRun("run-a", "interrupted", null, 1);
        expect(runs.claimRun("run-a", ["interrupted"], 30_000, 1)).toBe(true);
        return runs;
      };

      test("a run's lease epoch is 1 when registered and one more with every claim; a claim from an epoch the run has left is refused", () => {
        store.createSession("s1");
        const runs = leases();
        runs.registerRun("run-a", "s1", "Job.run", 30_000);
        expect(runs.getRun("run-a")).toMatchObject({ state: "running", leaseEpoch: 1 });
        runs.releaseRun("run-a", "paused", null, 1);
        // A release gives the lease up without a new epoch.
        expect(runs.getRun("run-a")).toMatchObject({ state: "paused", owned: false, leaseEpoch: 1 });
        // Claimed from an epoch the run is not at (someone claimed it since the claimant looked): refused, nothing changes.
        expect(runs.claimRun("run-a", ["paused"], 30_000, 2)).toBe(false);
        expect(runs.getRun("run-a")).toMatchObject({ state: "paused", owned: false, leaseEpoch: 1 });
        expect(runs.claimRun("run-a", ["paused"], 30_000, 1)).toBe(true);
        expect(runs.getRun("run-a")).toMatchObject({ state: "running", owned: true, leaseEpoch: 2 });
        runs.releaseRun("run-a", "interrupted", null, 2);
        // Without fromEpoch a claim works as before, and still counts.
        expect(runs.claimRun("run-a", ["interrupted"], 30_000)).toBe(true);
        expect(runs.listRuns().map((run) => [run.runId, run.leaseEpoch])).toEqual([["run-a", 3]]);
        expect(() => runs.claimRun("run-a", ["running"], 30_000, 0)).toThrow(TypeError);
        expect(() => runs.renewRun("run-a", 30_000, 1.5)).toThrow(TypeError);
        expect(() => store.commit("s1", [], { fences: [{ runId: "run-a", epoch: -1 }] })).toThrow(TypeError);
        expect(() => store.commit("s1", [], { fences: "run-a" as never })).toThrow(TypeError);
      });

      test("a commit fenced with the run's current epoch lands; one fenced with an epoch the run has left is refused whole with a LeaseLostError: none of its nodes land", () => {
        const runs = takenOver();
        // Worker B (epoch 2) finishes the run.
        store.commit(
          "s1",
          [
            { kind: "update", id: "step", fields: { output: "B", metadata: { status: "completed" } } },
            { kind: "update", id: "run-a", fields: { output: "B", metadata: { status: "completed" } } },
          ],
          { fences: [{ runId: "run-a", epoch: 2 }] },
        );
        runs.releaseRun("run-a", "completed", null, 2);
        // Worker A's late commit (epoch 1): an update of the step, a new node and the run's output. Nothing of it lands.
        const error = thrownBy(() =>
          store.commit(
            "s1",
            [
              { kind: "update", id: "step", fields: { output: "A", metadata: { status: "completed", by: "A" } } },
              append(node("late", 2, { caller: "step" })),
              { kind: "update", id: "run-a", fields: { output: "A" } },
            ],
            { fences: [{ runId: "run-a", epoch: 1 }] },
          ),
        );
        expect(LeaseLostError.isInstance(error)).toBe(true);
        expect(SessionStoreError.isInstance(error)).toBe(true);
        expect(error).toMatchObject({ name: "LeaseLostError", runId: "run-a", heldEpoch: 1, currentEpoch: 2, location: store.location });
        expect((error as Error).message).toMatch(/lease of run 'run-a': it wrote under lease epoch 1, but run 'run-a' is at lease epoch 2 .*Nothing of this write was stored/);
        expect(store.hasNode("s1", "late")).toBe(false);
        expect(store.readNodes("s1").map((stored) => [stored.id, stored.output, stored.metadata])).toEqual([
          ["run-a", "B", { status: "completed" }],
          ["step", "B", { status: "completed" }],
        ]);
        expect(store.getSession("s1")).toMatchObject({ nodeCount: 2, lastSeq: 1 });
        // One stale fence among several refuses the whole commit; a run the store does not hold refuses it too.
        const unknown = thrownBy(() => store.commit("s1", [append(node("x", 3))], { fences: [{ runId: "run-a", epoch: 2 }, { runId: "no-such-run", epoch: 1 }] }));
        expect(unknown).toMatchObject({ name: "LeaseLostError", runId: "no-such-run", heldEpoch: 1, currentEpoch: null });
        expect(store.hasNode("s1", "x")).toBe(false);
        store.commit("s1", [append(node("x", 3, { caller: "step" }))], { fences: [{ runId: "run-a", epoch: 2 }] });
        expect(store.hasNode("s1", "x")).toBe(true);
      });

      test("a renewal or a release under an epoch the run has left is refused: the release throws LeaseLostError and leaves the run as its holder has it", () => {
        const runs = takenOver();
        expect(runs.renewRun("run-a", 60_000, 1)).toBe(false);
        expect(runs.renewRun("run-a", 60_000, 2)).toBe(true);
        const error = thrownBy(() => runs.releaseRun("run-a", "completed", '{"by":"A"}', 1));
        expect(LeaseLostError.isInstance(error)).toBe(true);
        expect(error).toMatchObject({ runId: "run-a", heldEpoch: 1, currentEpoch: 2 });
        expect(runs.getRun("run-a")).toMatchObject({ state: "running", owned: true, reason: null, leaseEpoch: 2 });
        runs.releaseRun("run-a", "completed", null, 2);
        expect(runs.getRun("run-a")).toMatchObject({ state: "completed", owned: false, leaseEpoch: 2 });
      });

      test("a writer drops the writes made under a refused lease and commits the others; flush({ fence }) throws the LeaseLostError, also later", () => {
        takenOver();
        const stale = { runId: "run-a", epoch: 1 };
        const writer = new SessionNodeWriter(store, "s1", { batching: "manual", shared: false });
        writer.append({ id: "step-2", role: "code", name: "work", caller: "run-a", predecessor: "step", metadata: { status: "running", step: "work" } }, { fence: stale });
        writer.update("run-a", { output: "A" }, { fence: stale });
        // Another call's node in the same batch is not under the lease: it goes in.
        writer.append({ id: "note", role: "user", name: "user", input: "unfenced" });
        const error = thrownBy(() => writer.flush({ fence: stale }));
        expect(LeaseLostError.isInstance(error)).toBe(true);
        expect(error).toMatchObject({ runId: "run-a", heldEpoch: 1, currentEpoch: 2 });
        expect(writer.pending).toBe(0);
        expect(store.hasNode("s1", "note")).toBe(true);
        expect(store.hasNode("s1", "step-2")).toBe(false);
        // Writes made under the refused lease later are dropped when made; a flush without the fence does not throw.
        writer.update("run-a", { metadata: { status: "error" } }, { fence: stale });
        writer.append({ id: "step-3", role: "code", name: "work", caller: "run-a", metadata: { status: "running" } }, { fence: stale });
        expect(writer.pending).toBe(0);
        expect(() => writer.flush()).not.toThrow();
        expect(() => writer.flush({ fence: stale })).toThrow(LeaseLostError);
        // The holder's writes (epoch 2) go in.
        const holder = { runId: "run-a", epoch: 2 };
        writer.update("run-a", { output: "B" }, { fence: holder });
        writer.flush({ fence: holder });
        const stored = new Map(store.readNodes("s1").map((found) => [found.id, found]));
        expect([...stored.keys()]).toEqual(["run-a", "step", "note"]);
        expect(stored.get("run-a")).toMatchObject({ output: "B", metadata: { status: "running" } });
      });
    });

    describe("inspection", () => {
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

      test("interruptRunning marks the store's running nodes interrupted", () => {
        store.createSession("s1");
        const writer = new SessionNodeWriter(store, "s1");
        writer.append({ id: "c", role: "code", name: "A.run", metadata: { status: "running" } });
        writer.append({ id: "d", role: "code", name: "A.run", metadata: { status: "completed" } });
        writer.flush();
        expect(store.interruptRunning()).toBe(1);
        expect(store.readNodes("s1").map((stored) => stored.metadata["status"])).toEqual(["interrupted", "completed"]);
        expect(store.interruptRunning()).toBe(0);
      });

      test("store.flush() commits every writer with a pending batch", () => {
        store.createSession("s1");
        store.createSession("s2");
        const one = new SessionNodeWriter(store, "s1", { batching: "manual" });
        const two = new SessionNodeWriter(store, "s2", { batching: "manual" });
        one.append({ id: "a", role: "user", name: "user" });
        two.append({ id: "b", role: "user", name: "user" });
        store.flush();
        expect(store.getSession("s1").nodeCount + store.getSession("s2").nodeCount).toBe(2);
        expect(one.pending + two.pending).toBe(0);
      });
    });
  });
}
