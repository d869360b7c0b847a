import { selectHistory } from "./history";
import { SessionGraph } from "./session-graph";
import type { SessionNode } from "./session-node";
import { SessionStore } from "./session-store";
import { SessionNodeWriter, type SessionNodeInput } from "./session-node-writer";
import { SessionNodeNotFoundError } from "./session-errors";

/*
 * u1 → c1 → c2                 (top-level spine; c2 is the running call)
 *      c1: l1 → s1 → l2        (inside c1)
 *          s1: ls1 → t1        (inside the tool call s1)
 *              t1: lt1         (inside t1)
 *      c2: l3                  (inside c2, the current scope)
 */
const RUN: SessionNodeInput[] = [
  { id: "u1", role: "user", name: "user", input: "hi" },
  { id: "c1", role: "code", name: "Agent.ask", predecessor: "u1", metadata: { status: "completed" } },
  { id: "l1", role: "llm", name: "model", caller: "c1" },
  { id: "s1", role: "code", name: "Tool.search", caller: "c1", predecessor: "l1", metadata: { status: "completed" } },
  { id: "ls1", role: "llm", name: "model", caller: "s1" },
  { id: "t1", role: "code", name: "Inner.fetch", caller: "s1", predecessor: "ls1", metadata: { status: "completed" } },
  { id: "lt1", role: "llm", name: "model", caller: "t1" },
  { id: "l2", role: "llm", name: "model", caller: "c1", predecessor: "s1" },
  { id: "c2", role: "code", name: "Agent.ask", predecessor: "c1", metadata: { status: "running" } },
  { id: "l3", role: "llm", name: "model", caller: "c2" },
];

function graphOf(inputs: SessionNodeInput[], metadata: Record<string, Record<string, unknown>> = {}): SessionGraph {
  return new SessionGraph(
    inputs.map(
      (input, index): SessionNode => ({
        seq: index,
        createdAt: index,
        input: undefined,
        output: undefined,
        caller: null,
        predecessor: null,
        ...input,
        metadata: { ...input.metadata, ...metadata[input.id] },
      }),
    ),
  );
}

const ids = (nodes: SessionNode[]): string[] => nodes.map((node) => node.id);

describe("selectHistory", () => {
  test("dag (default): the head's spine plus each spine node's call subtree, then enclosing spines", () => {
    expect(ids(selectHistory(graphOf(RUN), { headId: "l3" }))).toEqual(
      ["u1", "c1", "l1", "s1", "ls1", "t1", "lt1", "l2", "c2", "l3"],
    );
  });

  test("the first request of a call: head is the call itself", () => {
    expect(ids(selectHistory(graphOf(RUN.slice(0, 9)), { headId: "c2", currentCallId: "c2" }))).toEqual(
      ["u1", "c1", "l1", "s1", "ls1", "t1", "lt1", "l2", "c2"],
    );
  });

  test("a fork sees only its own branch", () => {
    const forked = [...RUN, { id: "c3", role: "code" as const, name: "Agent.ask", predecessor: "c1" }];
    expect(ids(selectHistory(graphOf(forked), { headId: "c3" }))).toEqual(
      ["u1", "c1", "l1", "s1", "ls1", "t1", "lt1", "l2", "c3"],
    );
  });

  test("filter false sends no history; an empty session has none", () => {
    expect(selectHistory(graphOf(RUN), { headId: "l3", filter: false })).toEqual([]);
    expect(selectHistory(new SessionGraph(), { headId: null })).toEqual([]);
  });

  test("filter current_call keeps only nodes inside the current call", () => {
    expect(ids(selectHistory(graphOf(RUN), { headId: "l3", filter: "current_call" }))).toEqual(["l3"]);
    expect(ids(selectHistory(graphOf(RUN), { headId: "l3", currentCallId: "c2", filter: "current_call" }))).toEqual(["l3"]);
    // At the top level there is no current call, so nothing qualifies.
    expect(selectHistory(graphOf(RUN), { headId: "c2", filter: "current_call" })).toEqual([]);
  });

  test("a callback filter applies after DAG visibility", () => {
    const seen: string[] = [];
    const kept = selectHistory(graphOf(RUN, { s1: { expose: "hidden" } }), {
      headId: "l3",
      filter: (node) => {
        seen.push(node.id);
        return node.role !== "llm";
      },
    });
    expect(ids(kept)).toEqual(["u1", "c1", "c2"]);
    expect(seen).not.toContain("ls1");
  });

  test("expose 'hidden' removes the node and everything that ran inside it", () => {
    expect(ids(selectHistory(graphOf(RUN, { s1: { expose: "hidden" } }), { headId: "l3" }))).toEqual(
      ["u1", "c1", "l1", "l2", "c2", "l3"],
    );
  });

  test("expose 'io' hides a code node's llm descendants at every depth, keeping nested calls", () => {
    expect(ids(selectHistory(graphOf(RUN, { s1: { expose: "io" } }), { headId: "l3" }))).toEqual(
      ["u1", "c1", "l1", "s1", "t1", "l2", "c2", "l3"],
    );
    expect(ids(selectHistory(graphOf(RUN, { c1: { expose: "io" } }), { headId: "l3" }))).toEqual(
      ["u1", "c1", "s1", "t1", "c2", "l3"],
    );
  });

  test("expose 'llm' hides a code node's code children (and what ran inside them)", () => {
    expect(ids(selectHistory(graphOf(RUN, { s1: { expose: "llm" } }), { headId: "l3" }))).toEqual(
      ["u1", "c1", "l1", "s1", "ls1", "l2", "c2", "l3"],
    );
  });

  test("the current call's own expose does not hide its model requests from itself", () => {
    expect(ids(selectHistory(graphOf(RUN, { c2: { expose: "io" } }), { headId: "l3" }))).toEqual(
      ["u1", "c1", "l1", "s1", "ls1", "t1", "lt1", "l2", "c2", "l3"],
    );
  });

  test("renderRange.callers limits how many enclosing spines are included", () => {
    const graph = graphOf(RUN, { c2: { renderRange: { callers: 0 } } });
    expect(ids(selectHistory(graph, { headId: "l3" }))).toEqual(["l3"]);
    // Inside the nested call t1 (head lt1): callers 1 adds s1's spine, 2 adds c1's, then the top level.
    const nested = graphOf(RUN.slice(0, 7));
    expect(ids(selectHistory(nested, { headId: "lt1", renderRange: { callers: 1 } }))).toEqual(["ls1", "t1", "lt1"]);
    expect(ids(selectHistory(nested, { headId: "lt1", renderRange: { callers: 2 } }))).toEqual(["l1", "s1", "ls1", "t1", "lt1"]);
    expect(ids(selectHistory(nested, { headId: "lt1" }))).toEqual(["u1", "c1", "l1", "s1", "ls1", "t1", "lt1"]);
  });

  test("renderRange.subcalls limits how deep each spine node's call subtree is rendered", () => {
    expect(ids(selectHistory(graphOf(RUN), { headId: "l3", renderRange: { subcalls: 0 } }))).toEqual(["u1", "c1", "c2", "l3"]);
    expect(ids(selectHistory(graphOf(RUN, { c2: { renderRange: { subcalls: 1 } } }), { headId: "l3" }))).toEqual(
      ["u1", "c1", "l1", "s1", "l2", "c2", "l3"],
    );
  });

  test("an unknown head is a SessionNodeNotFoundError", () => {
    expect(() => selectHistory(graphOf(RUN), { headId: "ghost" })).toThrow(SessionNodeNotFoundError);
  });

  test("the same selection from a persisted graph and an in-memory graph", () => {
    const store = new SessionStore({ path: ":memory:" });
    try {
      store.createSession("s");
      const writer = new SessionNodeWriter(store, "s");
      for (const input of RUN) writer.append(input);
      const persisted = writer.load();
      const options = { headId: "l3", currentCallId: "c2" };
      expect(ids(selectHistory(persisted, options))).toEqual(ids(selectHistory(graphOf(RUN), options)));
    } finally {
      store.close();
    }
  });
});
