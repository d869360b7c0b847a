import { ToolArgumentsError, boundProblems, MAX_LISTED_PROBLEMS, validateJsonSchema } from "@rein/guard";
import type { JsonSchema } from "../model/model-provider";
import { tool } from "./tool";

const closed: JsonSchema = {
  type: "object",
  properties: { query: { type: "string" } },
  required: ["query"],
  additionalProperties: false,
};

describe("own properties only", () => {
  it.each(["constructor", "toString", "hasOwnProperty", "valueOf", "__defineGetter__", "isPrototypeOf"])(
    "with additionalProperties: false, an argument named %s is refused",
    (name) => {
      expect(validateJsonSchema(closed, { query: "x", [name]: "sneaky" })).toEqual([`arguments.${name}: is not an accepted argument`]);
    },
  );

  it("a literal __proto__ key from JSON.parse is refused and changes no prototype", () => {
    const args = JSON.parse('{"query":"x","__proto__":{"polluted":true}}') as Record<string, unknown>;
    expect(Object.hasOwn(args, "__proto__")).toBe(true);
    expect(validateJsonSchema(closed, args)).toEqual(["arguments.__proto__: is not an accepted argument"]);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });

  it("required is satisfied only by an own property, never by Object.prototype", () => {
    const schema: JsonSchema = { type: "object", properties: { toString: { type: "string" } }, required: ["toString", "constructor"] };
    expect(validateJsonSchema(schema, {})).toEqual(["arguments.toString: is required", "arguments.constructor: is required"]);
    expect(validateJsonSchema(schema, { toString: "a", constructor: "b" })).toEqual([]);
  });

  it("an own property named like a prototype member is checked against its own schema", () => {
    const schema: JsonSchema = { type: "object", properties: { constructor: { type: "number" } } };
    expect(validateJsonSchema(schema, { constructor: "x" })).toEqual(["arguments.constructor: expected number, got string"]);
    expect(validateJsonSchema(schema, { constructor: 3 })).toEqual([]);
  });

  it("a schema parsed from JSON that declares __proto__ as a property accepts it", () => {
    const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}},"additionalProperties":false}') as JsonSchema;
    expect(validateJsonSchema(schema, JSON.parse('{"__proto__":"fine"}'))).toEqual([]);
    expect(validateJsonSchema(schema, JSON.parse('{"__proto__":1}'))).toEqual(["arguments.__proto__: expected string, got number"]);
  });

  it("the tool never runs with an inherited-name argument", async () => {
    const seen: unknown[] = [];
    const search = tool({
      name: "search",
      description: "Search.",
      parameters: closed,
      execute: (args) => {
        seen.push(args);
        return "ran";
      },
    });
    await expect(search.execute(JSON.parse('{"query":"x","constructor":1}'))).rejects.toBeInstanceOf(ToolArgumentsError);
    await expect(search.execute(JSON.parse('{"query":"x","__proto__":{}}'))).rejects.toBeInstanceOf(ToolArgumentsError);
    expect(seen).toEqual([]);
  });
});

describe("what goes back to the model is bounded", () => {
  it("200k unexpected keys: 20 problems listed, the rest counted, the error message under 4 KB", async () => {
    const args: Record<string, unknown> = { query: "x" };
    for (let i = 0; i < 200_000; i++) args[`key${i}`] = i;
    const problems = validateJsonSchema(closed, args);
    expect(problems).toHaveLength(MAX_LISTED_PROBLEMS + 1);
    expect(problems[MAX_LISTED_PROBLEMS]).toBe(`… and ${200_000 - MAX_LISTED_PROBLEMS} more problems`);

    const search = tool({ name: "search", description: "Search.", parameters: closed, execute: () => "never" });
    const error = await search.execute(args).then(
      () => undefined,
      (thrown: unknown) => thrown as ToolArgumentsError,
    );
    expect(error).toBeInstanceOf(ToolArgumentsError);
    expect(error!.message.length).toBeLessThan(4096);
    expect(error!.message).toContain("… and 199980 more problems");
  });

  it("long keys, paths and values are cut at 200 characters", () => {
    const longKey = "k".repeat(10_000);
    const longValue = "v".repeat(1_000_000);
    const [keyProblem] = validateJsonSchema(closed, { query: "x", [longKey]: 1 });
    expect(keyProblem.length).toBeLessThan(300);
    expect(keyProblem).toMatch(/^arguments\.k+…: is not an accepted argument$/);
    const [enumProblem] = validateJsonSchema({ type: "object", properties: { mode: { enum: ["a", "b"] } } }, { mode: longValue });
    expect(enumProblem.length).toBeLessThan(300);
    expect(enumProblem).toMatch(/^arguments\.mode: expected one of \["a","b"\], got "v+…$/);
  });

  it("deeply nested problems keep the text bound as well as the count", () => {
    const schema: JsonSchema = { type: "object", properties: { rows: { type: "array", items: { type: "string", maxLength: 1 } } } };
    const problems = validateJsonSchema(schema, { rows: Array.from({ length: 10_000 }, () => "too long") });
    expect(problems).toHaveLength(MAX_LISTED_PROBLEMS + 1);
    expect(problems.join("; ").length).toBeLessThan(4096);
    expect(problems[0]).toBe("arguments.rows[0]: must have at most 1 characters");
  });

  it("unserialisable values in enum/const checks do not crash the validator", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic["self"] = cyclic;
    expect(validateJsonSchema({ type: "object", properties: { a: { const: 1 } } }, { a: cyclic })).toEqual([
      "arguments.a: expected 1, got [object Object]",
    ]);
  });

  it("boundProblems bounds other validators' lines the same way (zod issues)", () => {
    const lines = Array.from({ length: 1000 }, (_, i) => `arguments.k${i}: ${"x".repeat(1000)}`);
    const bounded = boundProblems(lines);
    // The text bound (about 4 KB) stops the listing before the count bound does.
    expect(bounded.length).toBeLessThanOrEqual(MAX_LISTED_PROBLEMS + 1);
    expect(bounded[bounded.length - 1]).toBe(`… and ${1000 - (bounded.length - 1)} more problems`);
    expect(bounded.join("; ").length).toBeLessThan(5000);
  });

  it("valid arguments produce no problems and a small problem list is unchanged", () => {
    expect(validateJsonSchema(closed, { query: "x" })).toEqual([]);
    expect(validateJsonSchema(closed, { query: 1, extra: true })).toEqual([
      "arguments.query: expected string, got number",
      "arguments.extra: is not an accepted argument",
    ]);
  });
});
