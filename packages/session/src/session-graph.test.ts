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

test("the call-tree and successor indexes, made on first use, follow later adds and replaces", () => {
  const graph = new SessionGraph([node("a"), node("b", { predecessor: "a" })]);
  expect(graph.childrenOf(null).map((n) => n.id)).toEqual(["a", "b"]);
  expect(graph.successorsOf("a").map((n) => n.id)).toEqual(["b"]);
  graph.add(node("x", { caller: "b" }));
  graph.add(node("c", { predecessor: "a" }));
  expect(graph.childrenOf("b").map((n) => n.id)).toEqual(["x"]);
  expect(graph.successorsOf("a").map((n) => n.id)).toEqual(["b", "c"]);
  graph.replace({ ...graph.get("c")!, output: 1 });
  graph.replace({ ...graph.get("x")!, output: 2 });
  expect(graph.successorsOf("a")[1]!.output).toBe(1);
  expect(graph.childrenOf("b")[0]!.output).toBe(2);
  graph.add(node("d", { predecessor: "c" }));
  graph.replace({ ...graph.get("d")!, output: 3 });
  expect(graph.successorsOf("c")[0]!.output).toBe(3);
  expect(graph.tips().map((n) => n.id)).toEqual(["b", "d"]);
});

test("all() is in seq order, ties in the order added, and a replaced node keeps its place", () => {
  const graph = new SessionGraph([node("a", { seq: 5 }), node("b", { seq: 9 })]);
  graph.add(node("tie", { seq: 5 }));
  graph.add(node("first", { seq: 1 }));
  graph.replace({ ...graph.get("a")!, output: 1 });
  expect(graph.all().map((n) => n.id)).toEqual(["first", "a", "tie", "b"]);
  expect(graph.all()[1]!.output).toBe(1);
  expect(graph.childrenOf(null).map((n) => n.id)).toEqual(["first", "a", "tie", "b"]);
});

test("a node replaced with another seq (the one its store gave it) moves to its place in seq order, in every index", () => {
  const graph = new SessionGraph([node("a", { seq: 0 }), node("b", { seq: 1, predecessor: "a" }), node("c", { seq: 2, caller: "a", predecessor: "a" })]);
  // Indexes built before the change must follow it too.
  expect(graph.childrenOf("a").map((n) => n.id)).toEqual(["c"]);
  expect(graph.successorsOf("a").map((n) => n.id)).toEqual(["b", "c"]);
  graph.add(node("d", { seq: 3, caller: "a" }));
  graph.replace({ ...graph.get("b")!, seq: 7 });
  graph.replace({ ...graph.get("c")!, seq: 5 });
  expect(graph.all().map((n) => [n.id, n.seq])).toEqual([
    ["a", 0],
    ["d", 3],
    ["c", 5],
    ["b", 7],
  ]);
  expect(graph.childrenOf("a").map((n) => n.id)).toEqual(["d", "c"]);
  expect(graph.successorsOf("a").map((n) => n.id)).toEqual(["c", "b"]);
  expect(graph.get("b")!.seq).toBe(7);
  expect(graph.size).toBe(4);
});
