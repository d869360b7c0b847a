import { SessionGraph } from "./session-graph";
import type { SessionNode } from "./session-node";

let seq = 0;
function node(id: string, fields: Partial<SessionNode> = {}): SessionNode {
  return { id, seq: seq++, createdAt: 0, role: "code", name: id, input: undefined, output: undefined, caller: null, predecessor: null, metadata: {}, ...fields };
}

test("indexes nodes by id, by caller and by predecessor, in seq order", () => {
  const graph = new SessionGraph([
    node("a"),
    node("b", { predecessor: "a" }),
    node("x", { caller: "b", role: "llm" }),
    node("c", { predecessor: "a" }),
  ]);
  expect(graph.size).toBe(4);
  expect(graph.childrenOf(null).map((n) => n.id)).toEqual(["a", "b", "c"]);
  expect(graph.childrenOf("b").map((n) => n.id)).toEqual(["x"]);
  expect(graph.successorsOf("a").map((n) => n.id)).toEqual(["b", "c"]);
  expect(graph.spine("c").map((n) => n.id)).toEqual(["a", "c"]);
  expect(graph.tips().map((n) => n.id)).toEqual(["b", "c"]);
  expect(graph.isDescendantOf(graph.get("x")!, "b")).toBe(true);
  expect(graph.isDescendantOf(graph.get("x")!, "a")).toBe(false);
});

test("add is idempotent on id and keeps seq order for late nodes", () => {
  const graph = new SessionGraph([node("a", { seq: 5 }), node("b", { seq: 9 })]);
  expect(graph.add(node("a", { seq: 100 }))).toBe(false);
  graph.add(node("early", { seq: 1 }));
  expect(graph.all().map((n) => n.id)).toEqual(["early", "a", "b"]);
  expect(graph.childrenOf(null).map((n) => n.id)).toEqual(["early", "a", "b"]);
});

test("replace swaps a node in every index", () => {
  const graph = new SessionGraph([node("a"), node("b", { predecessor: "a", caller: null })]);
  graph.replace({ ...graph.get("b")!, output: 7 });
  expect(graph.all()[1]!.output).toBe(7);
  expect(graph.successorsOf("a")[0]!.output).toBe(7);
  expect(graph.childrenOf(null)[1]!.output).toBe(7);
});

test("a predecessor cycle in damaged data does not hang the spine walk", () => {
  const graph = new SessionGraph([node("a", { predecessor: "b" }), node("b", { predecessor: "a" })]);
  expect(graph.spine("a").length).toBeLessThanOrEqual(3);
});
