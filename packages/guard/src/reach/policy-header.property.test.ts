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

/**
 * One code point of the whole Unicode range but the surrogates: what fast-check's `unit: "binary"` draws (the same
 * `nat` over the 1,112,064 code points, the same mapping, and the same dangerous strings such as `__proto__` mixed
 * in, through the unmapper). fast-check's own unit builds a map of every code point back to its index when a string
 * arbitrary of it is first made: about 1.5 s of CPU in each test file that uses one, before any value is drawn.
 */
const SURROGATES = 0xe000 - 0xd800;
const codePoint = fc.nat({ max: 0x10ffff - SURROGATES }).map(
  (index) => String.fromCodePoint(index < 0xd800 ? index : index + SURROGATES),
  (value) => {
    const point = typeof value === "string" ? value.codePointAt(0) : undefined;
    if (point === undefined || String.fromCodePoint(point) !== value || (point >= 0xd800 && point < 0xe000)) throw new Error("not one code point");
    return point < 0xd800 ? point : point - SURROGATES;
  },
);

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
  .tuple(fc.constantFrom(SIGNED, UNSIGNED), fc.array(fc.tuple(fc.nat(), fc.constantFrom("flip", "delete", "insert", "truncate", "dot", "double"), fc.string({ unit: codePoint, minLength: 1, maxLength: 1 })), { minLength: 1, maxLength: 3 }))
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
  fc.string({ unit: codePoint, maxLength: 300 }),
  fc.stringMatching(/^[A-Za-z0-9_-]{0,80}(\.[A-Za-z0-9_-]{0,60})?$/),
  fc.json().map(toBase64url),
  fc.json().map((json) => sign(toBase64url(json))),
  nearBudget.map(toBase64url),
  nearBudget.map((json) => sign(toBase64url(json))),
  mutation,
  fc.anything(),
);

/**
 * A decoded budget must satisfy every field check the encoder makes: the checks that fail, by name, with the encoder's
 * and `passOnBudget`'s copies of the budget, for one `toEqual` per value (jest's `expect` costs about 50 µs a call,
 * and a property calling it ten times per accepted value spends more there than in the decoder).
 */
function budgetChecks(budget: ReachBudget): { failed: string[]; roundTrip: ReachBudget; passedOn: ReachBudget } {
  const failed: string[] = [];
  const keys = Object.keys(budget);
  if (!keys.every((key) => ["depth", "memoryMb", "zones", "tokens", "costUsd", "deadline"].includes(key))) failed.push("known keys");
  if (!(budget.depth === Infinity || (Number.isSafeInteger(budget.depth) && budget.depth >= 0))) failed.push("depth");
  for (const [name, value] of [["memoryMb", budget.memoryMb], ["costUsd", budget.costUsd], ["deadline", budget.deadline]] as const) {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) failed.push(name);
  }
  if (budget.tokens !== undefined && !(Number.isSafeInteger(budget.tokens) && budget.tokens >= 0)) failed.push("tokens");
  if (budget.zones !== undefined && !budget.zones.every((zone) => typeof zone === "string" && zone !== "")) failed.push("zones");
  // The encoder accepts it and the decoder gives it back unchanged.
  return { failed, roundTrip: decodePolicyHeader(encodePolicyHeader(budget)), passedOn: passOnBudget(budget) };
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
        // With a secret, only a header that is exactly payload "." HMAC(secret, payload) gets through.
        const signed = withSecret ? sign(String(value).split(".")[0]) : value;
        expect({ ...budgetChecks(budget), value }).toEqual({ failed: [], roundTrip: budget, passedOn: budget, value: signed });
      }),
      { numRuns: 10_000 },
    );
    // The generators reach both outcomes often enough to mean something.
    expect(accepted).toBeGreaterThan(500);
    expect(refused).toBeGreaterThan(5000);
  });
});
