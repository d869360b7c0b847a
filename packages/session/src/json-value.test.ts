/** `jsonProblem`: what a store keeps must be plain JSON, so it survives a save and a load unchanged. */
import { jsonProblem } from "./json-value";

test("plain JSON throughout has no problem", () => {
  for (const value of [null, true, 0, -1.5, "text", [], {}, [1, "a", null, { b: [true] }], Object.create(null) as object]) {
    expect(jsonProblem(value)).toBeUndefined();
  }
});

test("the first value that would not survive a save is named by its path, with what it is", () => {
  const circular: Record<string, unknown> = { a: 1 };
  circular["self"] = circular;
  class Point {
    x = 1;
  }
  expect([
    jsonProblem(Number.NaN),
    jsonProblem({ a: [1, Infinity] }),
    jsonProblem({ run: () => undefined }),
    jsonProblem({ id: 10n }),
    jsonProblem({ gone: undefined }),
    jsonProblem([Symbol("s")]),
    jsonProblem({ when: new Date(0) }),
    jsonProblem({ map: new Map() }),
    jsonProblem({ nested: { point: new Point() } }),
    jsonProblem(circular),
  ]).toEqual([
    ["", "is NaN"],
    ["a[1]", "is Infinity"],
    ["run", "is a function"],
    ["id", "is a bigint"],
    ["gone", "is undefined"],
    ["[0]", "is a symbol"],
    ["when", "is a Date, not a plain object"],
    ["map", "is a Map, not a plain object"],
    ["nested.point", "is a Point, not a plain object"],
    ["self", "is a circular reference"],
  ]);
});

test("the same object twice, not inside itself, is not circular", () => {
  const shared = { n: 1 };
  expect(jsonProblem({ a: shared, b: [shared, shared] })).toBeUndefined();
});
