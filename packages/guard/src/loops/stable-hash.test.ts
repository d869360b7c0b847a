import { createHash } from "node:crypto";
import { hashOutcome, hashToolCall } from "./stable-hash";
import { stableStringify } from "./stable-json";
import { UnknownToolError } from "./unknown-tool-error";

describe("hashToolCall", () => {
  it("is the tool name, a colon and 64 hex chars of sha256 over a stable JSON", () => {
    const hash = hashToolCall("search", { q: "rein", page: 1 });
    expect(hash).toMatch(/^search:[0-9a-f]{64}$/);
    const expected = createHash("sha256").update('{"page":1,"q":"rein"}').digest("hex");
    expect(hash).toBe(`search:${expected}`);
  });

  it("ignores key order at every depth but not array order or the tool name", () => {
    expect(hashToolCall("t", { a: { x: 1, y: 2 }, b: 1 })).toBe(hashToolCall("t", { b: 1, a: { y: 2, x: 1 } }));
    expect(hashToolCall("t", [1, 2])).not.toBe(hashToolCall("t", [2, 1]));
    expect(hashToolCall("t", { a: 1 })).not.toBe(hashToolCall("u", { a: 1 }));
  });

  it("survives cycles", () => {
    const cyclic: Record<string, unknown> = { name: "a" };
    cyclic.self = cyclic;
    expect(() => hashToolCall("t", cyclic)).not.toThrow();
    expect(stableStringify(cyclic)).toBe('{"name":"a","self":"[Circular]"}');
    // A shared (non-cyclic) reference is written in full both times.
    const shared = { v: 1 };
    expect(stableStringify({ a: shared, b: shared })).toBe('{"a":{"v":1},"b":{"v":1}}');
  });

  it("tells apart bigint, binary data, errors and non-finite numbers", () => {
    expect(stableStringify({ n: 12n })).toBe('{"n":{"$bigint":"12"}}');
    expect(hashToolCall("t", { n: 12n })).not.toBe(hashToolCall("t", { n: 12 }));
    expect(stableStringify(new Uint8Array([1, 2, 3]))).toBe('{"$bytes":"AQID"}');
    expect(hashToolCall("t", new Uint8Array([1]))).not.toBe(hashToolCall("t", new Uint8Array([2])));
    expect(stableStringify(new TypeError("bad"))).toBe('{"$error":{"message":"bad","name":"TypeError"}}');
    expect(stableStringify([Number.NaN, Infinity, -Infinity])).toBe(
      '[{"$number":"NaN"},{"$number":"Infinity"},{"$number":"-Infinity"}]',
    );
    expect(hashToolCall("t", { x: Number.NaN })).not.toBe(hashToolCall("t", { x: null }));
    expect(stableStringify({ d: new Date(0), m: new Map([["k", 1]]), s: new Set([2]) })).toBe(
      '{"d":"1970-01-01T00:00:00.000Z","m":{"$map":[["k",1]]},"s":{"$set":[2]}}',
    );
  });

  it("drops undefined fields as JSON does", () => {
    expect(hashToolCall("t", { a: 1, b: undefined })).toBe(hashToolCall("t", { a: 1 }));
    expect(hashToolCall("t", undefined)).toBe(hashToolCall("t", null));
  });
});

describe("hashOutcome", () => {
  it("is 64 hex chars and ignores key order", () => {
    const hash = hashOutcome({ result: { a: 1, b: [1, "x"] } });
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hashOutcome({ result: { b: [1, "x"], a: 1 } })).toBe(hash);
  });

  it("drops the default volatile keys at any depth", () => {
    const first = { exitCode: 0, stdout: "ok", durationMs: 12, pid: 100, cwd: "/a", meta: { sessionId: "s1", startedAt: 1 } };
    const second = { exitCode: 0, stdout: "ok", durationMs: 99, pid: 200, cwd: "/b", meta: { sessionId: "s2", startedAt: 2 } };
    expect(hashOutcome({ result: first })).toBe(hashOutcome({ result: second }));
    expect(hashOutcome({ result: { ...first, stdout: "changed" } })).not.toBe(hashOutcome({ result: first }));
    const sent = [{ messageId: "m1", fileId: "f1", receipt: "r1", timestamp: 1, status: "sent" }];
    const sentAgain = [{ messageId: "m2", fileId: "f2", receipt: "r2", timestamp: 2, status: "sent" }];
    expect(hashOutcome({ result: sent })).toBe(hashOutcome({ result: sentAgain }));
  });

  it("takes its own volatile keys when given", () => {
    const a = { etag: "1", body: "x", pid: 1 };
    const b = { etag: "2", body: "x", pid: 2 };
    expect(hashOutcome({ result: a }, { volatileKeys: ["etag"] })).not.toBe(hashOutcome({ result: b }, { volatileKeys: ["etag"] }));
    expect(hashOutcome({ result: a }, { volatileKeys: new Set(["etag", "pid"]) })).toBe(
      hashOutcome({ result: b }, { volatileKeys: new Set(["etag", "pid"]) }),
    );
  });

  it("hashes an Error by its name and message only", () => {
    const first = new Error("disk full");
    const second = new Error("disk full");
    second.stack = "another stack";
    expect(hashOutcome({ error: first })).toBe(hashOutcome({ error: second }));
    expect(hashOutcome({ error: new TypeError("disk full") })).not.toBe(hashOutcome({ error: first }));
    expect(hashOutcome({ error: new UnknownToolError("x", ["a"]) })).toBe(hashOutcome({ error: new UnknownToolError("x", ["a"]) }));
  });

  it("never hashes a failure like a result, nor strings like their look-alikes", () => {
    expect(hashOutcome({ error: "boom" })).not.toBe(hashOutcome({ result: "boom" }));
    expect(hashOutcome({ result: ["ab", "c"] })).not.toBe(hashOutcome({ result: ["a", "bc"] }));
    expect(hashOutcome({ result: "1" })).not.toBe(hashOutcome({ result: 1 }));
    expect(hashOutcome({ result: { a: undefined } })).not.toBe(hashOutcome({ result: {} }));
    const long = "x".repeat(5000);
    expect(hashOutcome({ result: long })).not.toBe(hashOutcome({ result: `${long}y` }));
    expect(hashOutcome({ result: { text: long } })).toBe(hashOutcome({ result: { text: "x".repeat(5000) } }));
  });

  it("handles cycles, bigint, bytes and non-finite numbers", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(hashOutcome({ result: cyclic })).toMatch(/^[0-9a-f]{64}$/);
    expect(hashOutcome({ result: 1n })).not.toBe(hashOutcome({ result: 1 }));
    expect(hashOutcome({ result: Buffer.from("ab") })).not.toBe(hashOutcome({ result: Buffer.from("ac") }));
    expect(hashOutcome({ result: Number.NaN })).not.toBe(hashOutcome({ result: null }));
  });
});
