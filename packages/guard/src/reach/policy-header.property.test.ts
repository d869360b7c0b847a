import fc from "fast-check";
import { createHmac } from "node:crypto";
import type { ReachBudget } from "./reach-budget";
import { PolicyHeaderError } from "./reach-errors";
import { decodePolicyHeader, encodePolicyHeader } from "./policy-header";
import { passOnBudget } from "./clamp-budget";

const SECRET = "property-secret";
const VALID: ReachBudget = { depth: 2, memoryMb: 256, zones: ["local"], tokens: 5000, costUsd: 0.5, deadline: 1_800_000_000_000 };
const SIGNED = encodePolicyHeader(VALID, { secret: SECRET });
const UNSIGNED = encodePolicyHeader(VALID);

const toBase64url = (text: string): string => Buffer.from(text, "utf8").toString("base64url");
const sign = (payload: string): string => `${payload}.${createHmac("sha256", SECRET).update(payload).digest("base64url")}`;

/** Values near the fields' types and bounds, so parsing gets past the first checks. */
const fieldValue = fc.oneof(
  fc.integer({ min: -5, max: 5 }),
  fc.nat(),
  fc.double(),
  fc.constantFrom(0, -0, 2 ** 53, 2 ** 53 - 1, 8.64e15, 8.64e15 + 1, 1e308),
  fc.string(),
  fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 4 }),
  fc.jsonValue(),
);
const nearBudget = fc.dictionary(fc.constantFrom("d", "m", "z", "t", "c", "e", "x", "__proto__", "D"), fieldValue, { maxKeys: 7 }).map((object) => JSON.stringify(object));

/** A mutation of a valid header: one or a few character edits, truncation, duplication, extra dots. */
const mutation = fc
  .tuple(fc.constantFrom(SIGNED, UNSIGNED), fc.array(fc.tuple(fc.nat(), fc.constantFrom("flip", "delete", "insert", "truncate", "dot", "double"), fc.string({ unit: "binary", minLength: 1, maxLength: 1 })), { minLength: 1, maxLength: 3 }))
  .map(([header, edits]) => {
    let text = header;
    for (const [position, kind, character] of edits) {
      const at = text.length === 0 ? 0 : position % text.length;
      if (kind === "flip") text = text.slice(0, at) + character + text.slice(at + 1);
      else if (kind === "delete") text = text.slice(0, at) + text.slice(at + 1);
      else if (kind === "insert") text = text.slice(0, at) + character + text.slice(at);
      else if (kind === "truncate") text = text.slice(0, at);
      else if (kind === "dot") text = `${text.slice(0, at)}.${text.slice(at)}`;
      else text = text + text;
    }
    return text;
  });

/** Any budget the encoder accepts, encoded signed or unsigned. */
const validBudget: fc.Arbitrary<ReachBudget> = fc.record(
  {
    depth: fc.oneof(fc.nat(), fc.constant(Infinity), fc.constant(Number.MAX_SAFE_INTEGER)),
    memoryMb: fc.double({ min: 0, max: Number.MAX_SAFE_INTEGER, noNaN: true }),
    zones: fc.array(fc.string({ minLength: 1, maxLength: 12 }), { maxLength: 5 }),
    tokens: fc.oneof(fc.nat(), fc.constant(Infinity)),
    costUsd: fc.double({ min: 0, max: 1e6, noNaN: true }),
    deadline: fc.double({ min: 0, max: 8.64e15, noNaN: true }),
  },
  { requiredKeys: ["depth"] },
);
const encoded = fc.tuple(validBudget, fc.boolean()).map(([budget, signed]) => encodePolicyHeader(budget, signed ? { secret: SECRET } : {}));

const input = fc.oneof(
  encoded,
  fc.string(),
  fc.string({ unit: "binary", maxLength: 300 }),
  fc.stringMatching(/^[A-Za-z0-9_-]{0,80}(\.[A-Za-z0-9_-]{0,60})?$/),
  fc.json().map(toBase64url),
  fc.json().map((json) => sign(toBase64url(json))),
  nearBudget.map(toBase64url),
  nearBudget.map((json) => sign(toBase64url(json))),
  mutation,
  fc.anything(),
);

/** A decoded budget must satisfy every field check the encoder makes. */
function expectValidBudget(budget: ReachBudget): void {
  const keys = Object.keys(budget);
  expect(keys.every((key) => ["depth", "memoryMb", "zones", "tokens", "costUsd", "deadline"].includes(key))).toBe(true);
  expect(budget.depth === Infinity || (Number.isSafeInteger(budget.depth) && budget.depth >= 0)).toBe(true);
  for (const value of [budget.memoryMb, budget.costUsd, budget.deadline]) {
    if (value !== undefined) expect(Number.isFinite(value) && value >= 0).toBe(true);
  }
  if (budget.tokens !== undefined) expect(Number.isSafeInteger(budget.tokens) && budget.tokens >= 0).toBe(true);
  if (budget.zones !== undefined) expect(budget.zones.every((zone) => typeof zone === "string" && zone !== "")).toBe(true);
  // The encoder accepts it and the decoder gives it back unchanged.
  expect(decodePolicyHeader(encodePolicyHeader(budget))).toEqual(budget);
  expect(passOnBudget(budget)).toEqual(budget);
}

let savedSecret: string | undefined;
beforeAll(() => {
  savedSecret = process.env.REIN_POLICY_SECRET;
  delete process.env.REIN_POLICY_SECRET;
});
afterAll(() => {
  if (savedSecret !== undefined) process.env.REIN_POLICY_SECRET = savedSecret;
});

describe("decodePolicyHeader on 10,000 fuzzed values", () => {
  it("gives a valid budget or a PolicyHeaderError, never another error; with a secret only an exact signed header passes", () => {
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(input, fc.boolean(), (value, withSecret) => {
        let budget: ReachBudget;
        try {
          budget = decodePolicyHeader(value, withSecret ? { secret: SECRET } : {});
        } catch (error) {
          if (!PolicyHeaderError.isInstance(error)) throw error;
          refused++;
          return;
        }
        accepted++;
        expectValidBudget(budget);
        // With a secret, only a header that is exactly payload "." HMAC(secret, payload) gets through.
        if (withSecret) expect(value).toBe(sign(String(value).split(".")[0]));
      }),
      { numRuns: 10_000 },
    );
    // The generators reach both outcomes often enough to mean something.
    expect(accepted).toBeGreaterThan(500);
    expect(refused).toBeGreaterThan(5000);
  });
});
