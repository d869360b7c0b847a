import fc from "fast-check";
import { snapshotChanges, snapshotValue, type NodeJson } from "./node-json";

/** Every object and array reachable from `value`. */
function objectsIn(value: unknown, found = new Set<object>()): Set<object> {
  if (typeof value === "object" && value !== null && !found.has(value)) {
    found.add(value);
    for (const item of Object.values(value)) objectsIn(item, found);
  }
  return found;
}

describe("snapshotValue", () => {
  it("gives what a JSON round trip gives, and shares no object with the value", () => {
    fc.assert(
      fc.property(fc.anything({ maxDepth: 3 }), (value) => {
        const snapshot = snapshotValue(value, "n", "input");
        // Through JSON text: a flat copy keeps -0 where a round trip gives 0, both write "0".
        expect(JSON.stringify(snapshot)).toBe(JSON.stringify(value));
        const shared = objectsIn(value);
        for (const object of objectsIn(snapshot)) expect(shared.has(object)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it("keeps the text of a nested value for the store, and makes none for a flat one", () => {
    const keeper: { json: NodeJson | undefined } = { json: undefined };
    expect(snapshotValue({ status: "running", tries: 2 }, "n", "metadata", keeper)).toEqual({ status: "running", tries: 2 });
    expect(snapshotValue(["a", 1, null], "n", "input", keeper)).toEqual(["a", 1, null]);
    expect(keeper.json).toBeUndefined();
    expect(snapshotValue({ query: { page: 1 } }, "n", "output", keeper)).toEqual({ query: { page: 1 } });
    expect(keeper.json).toEqual({ output: '{"query":{"page":1}}' });
  });

  it("throws a TypeError naming the node and field for a value that is not JSON", () => {
    expect(() => snapshotValue({ size: 10n }, "c7", "output")).toThrow(/Session node 'c7' output is not JSON-serialisable/);
  });

  it("keeps an own __proto__ key as JSON.parse does", () => {
    const value = JSON.parse('{"__proto__": 1, "a": 2}') as Record<string, unknown>;
    const snapshot = snapshotValue(value, "n", "metadata") as Record<string, unknown>;
    expect(Object.getPrototypeOf(snapshot)).toBe(Object.prototype);
    expect(Object.keys(snapshot)).toEqual(["__proto__", "a"]);
  });
});

describe("snapshotChanges", () => {
  it("keeps keys set to undefined (they remove the key), flat or nested", () => {
    expect(snapshotChanges({ status: "completed", doc: undefined }, "n")).toEqual({ status: "completed", doc: undefined });
    expect(Object.keys(snapshotChanges({ usage: { input: 1 }, doc: undefined }, "n"))).toEqual(["usage", "doc"]);
  });
});
