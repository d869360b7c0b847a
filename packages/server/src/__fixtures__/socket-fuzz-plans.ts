/**
 * What the socket fuzz sends (socket-fuzz.ts): random requests to every
 * route with two API keys, no key, a wrong or malformed key; clients that
 * hang up mid-body, mid-answer or mid-SSE; chunked and declared bodies
 * over the limit; bodies sent slowly or never finished; broken request
 * heads and raw garbage.
 */
import fc from "fast-check";
import { encodePolicyHeader } from "rein";

/** Who a request claims to be. */
export type FuzzAuth = "a" | "b" | "none" | "wrong" | "malformed";

/** How a well-formed request's bytes are delivered. */
export type Delivery =
  | { readonly kind: "whole" }
  /** In a few pieces with pauses between them (well within the body timeout). */
  | { readonly kind: "slow"; readonly pieces: number; readonly pauseMs: number }
  /** Part of it, then nothing more: the server's timeout must close the connection. */
  | { readonly kind: "stall"; readonly fraction: number }
  /** Part of it, then the client hangs up mid-body. */
  | { readonly kind: "cut"; readonly fraction: number };

/** When the client hangs up on the answer. */
export type HangUp = { readonly kind: "never" } | { readonly kind: "first-bytes" } | { readonly kind: "after"; readonly ms: number };

/** Which route a well-formed request goes to. */
export type FuzzRoute = "run" | "runs" | "sessions" | "graph" | "run-get" | "cancel" | "resume" | "approvals" | "approve" | "events" | "healthz" | "unknown";

/** One well-formed HTTP/1.1 request (its content may be nonsense). */
export interface RequestPlan {
  readonly kind: "request";
  readonly route: FuzzRoute;
  readonly auth: FuzzAuth;
  readonly sse: boolean;
  readonly policy: string | undefined;
  /** The body, when the route takes one. */
  readonly body: string | undefined;
  /** Session or run id, or the index of a run id seen earlier (`{ seen }`). */
  readonly target: string | { readonly seen: number };
  readonly query: string;
  readonly chunked: boolean;
  readonly delivery: Delivery;
  readonly hangUp: HangUp;
}

/** A body over the server's limit: chunked (never finished, or finished) or with a Content-Length that says so. */
export interface OversizePlan {
  readonly kind: "oversize";
  readonly auth: FuzzAuth;
  readonly bytes: number;
  readonly chunked: boolean;
  readonly finish: boolean;
}

/** Bytes that are not a valid request, sent as they are. */
export interface BrokenPlan {
  readonly kind: "broken";
  readonly bytes: Uint8Array;
  /** Half-closes the connection after writing (else waits for the server to give up). */
  readonly end: boolean;
}

/** One fuzz request. */
export type FuzzPlan = RequestPlan | OversizePlan | BrokenPlan;

/** The names of the sessions the requests share (both keys use the same names: each key has its own). */
export const SESSION_NAMES = ["s1", "s2", "s3", "s4"] as const;

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 120 });

const budget = fc.record(
  {
    depth: fc.oneof(fc.integer({ min: 0, max: 8 }), fc.constant(Infinity)),
    tokens: fc.integer({ min: 0, max: 1e6 }),
    costUsd: fc.double({ min: 0, max: 10, noNaN: true }),
    zones: fc.array(fc.constantFrom("local", "cloud"), { maxLength: 2 }),
  },
  { requiredKeys: ["depth"] },
);

const policy = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: budget.map((b) => encodePolicyHeader(b)) },
  { weight: 1, arbitrary: printable },
  { weight: 1, arbitrary: fc.tuple(budget, printable).map(([b, tail]) => encodePolicyHeader(b) + tail) },
);

const entry = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom("research", "add", "stream", "nap", "pipeline", "fail") },
  { weight: 1, arbitrary: fc.constantFrom("wait", "nope", "__proto__", "") },
  { weight: 1, arbitrary: fc.string({ maxLength: 300 }) },
);

const sessionId = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...SESSION_NAMES) },
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 30 }), fc.integer()) },
);

const args = (name: string) =>
  name === "add"
    ? fc.tuple(fc.integer(), fc.integer()).map((pair) => ({ args: pair }))
    : name === "nap"
      ? fc.integer({ min: 0, max: 60 }).map((ms) => ({ args: [ms] }))
      : fc.oneof(printable.map((task) => ({ task })), fc.jsonValue({ maxDepth: 2 }).map((task) => ({ task })), fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }).map((list) => ({ args: list })));

const runBody = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(entry, sessionId).chain(([name, session]) => args(name).map((input) => JSON.stringify({ entry: name, ...input, ...(session === undefined ? {} : { sessionId: session }) }))) },
  { weight: 1, arbitrary: fc.json({ maxDepth: 3 }) },
  { weight: 1, arbitrary: printable },
);

const otherBody = fc.oneof(
  fc.constant(""),
  fc.constantFrom('{"approve":true}', '{"approve":false}', '{"codeChangePolicy":"keep_original"}', '{"codeChangePolicy":"use_latest"}', "{}"),
  fc.json({ maxDepth: 2 }),
  printable,
);

const delivery: fc.Arbitrary<Delivery> = fc.oneof(
  { weight: 12, arbitrary: fc.constant({ kind: "whole" as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("slow" as const), pieces: fc.integer({ min: 2, max: 5 }), pauseMs: fc.integer({ min: 1, max: 40 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("stall" as const), fraction: fc.double({ min: 0.05, max: 0.95, noNaN: true }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("cut" as const), fraction: fc.double({ min: 0.05, max: 0.95, noNaN: true }) }) },
);

const hangUp: fc.Arbitrary<HangUp> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: "never" as const }) },
  { weight: 3, arbitrary: fc.constant({ kind: "first-bytes" as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("after" as const), ms: fc.integer({ min: 0, max: 60 }) }) },
);

const auth: fc.Arbitrary<FuzzAuth> = fc.oneof(
  { weight: 4, arbitrary: fc.constant("a" as const) },
  { weight: 4, arbitrary: fc.constant("b" as const) },
  { weight: 1, arbitrary: fc.constantFrom("none" as const, "wrong" as const, "malformed" as const) },
);

const target = fc.oneof(
  { weight: 3, arbitrary: fc.nat().map((seen) => ({ seen })) },
  { weight: 2, arbitrary: fc.constantFrom(...SESSION_NAMES) },
  { weight: 1, arbitrary: fc.oneof(fc.constantFrom("no-such-run", "__proto__", "%ZZ", "..%2F..", "a".repeat(300)), fc.string({ maxLength: 40 }).map(encodeURIComponent)) },
);

const route: fc.Arbitrary<FuzzRoute> = fc.oneof(
  { weight: 10, arbitrary: fc.constant("run" as const) },
  { weight: 1, arbitrary: fc.constantFrom("runs" as const, "sessions" as const, "graph" as const, "run-get" as const, "cancel" as const, "resume" as const) },
  { weight: 1, arbitrary: fc.constantFrom("approvals" as const, "approve" as const, "events" as const, "healthz" as const, "unknown" as const) },
);

const request: fc.Arbitrary<RequestPlan> = fc
  .record({ route, auth, sse: fc.boolean(), policy, runBody, otherBody, target, query: fc.oneof(fc.constant(""), fc.constantFrom("running", "error,paused", "bogus", ","), printable), chunked: fc.boolean(), delivery, hangUp })
  .map(({ runBody: body, otherBody: other, ...plan }) => {
    const takesBody = plan.route === "run" || plan.route === "resume" || plan.route === "approve" || plan.route === "cancel";
    const selected = plan.route === "run" ? body : other;
    // A run that waits on its model ends only when its client hangs up: `wait` always hangs up (as JSON, no byte comes first).
    const waits = /"entry":"wait"/.test(selected) && (plan.hangUp.kind === "never" || (plan.hangUp.kind === "first-bytes" && !plan.sse));
    const hang: HangUp = waits ? { kind: "after", ms: 30 } : plan.hangUp;
    // The runs feed never ends by itself either.
    const events: HangUp = plan.route === "events" && hang.kind === "never" ? { kind: "first-bytes" } : hang;
    return { kind: "request" as const, ...plan, body: takesBody ? selected : undefined, hangUp: events };
  });

const oversize: fc.Arbitrary<OversizePlan> = fc.record({
  kind: fc.constant("oversize" as const),
  auth,
  bytes: fc.integer({ min: 16 * 1024 + 1, max: 4 * 1024 * 1024 }),
  chunked: fc.boolean(),
  finish: fc.boolean(),
});

const text = (value: string) => new TextEncoder().encode(value);

/** Request heads and bytes an HTTP parser must refuse (or time out on), none of them a request the server could answer 2xx. */
const BROKEN_TEMPLATES: readonly string[] = [
  "GARBAGE\r\n\r\n",
  "\r\n\r\n\r\n",
  "GET / HTTP/1.1\r\nHost x\r\n\r\n",
  "GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n",
  "GET /\x7f\x01 HTTP/1.1\r\nHost: x\r\n\r\n",
  "POST /v1/agent/run HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}",
  "POST /v1/agent/run HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n{}",
  "POST /v1/agent/run HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 9\r\n\r\n{}",
  "POST /v1/agent/run HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
  "POST /v1/agent/run HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
  "POST /v1/agent/run HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked, identity\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
  "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\x00b\r\n\r\n",
  "GET /healthz HTTP/1.1\r\nHost : x\r\n\r\n",
  "GET /healthz HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",
  `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"v".repeat(40_000)}\r\n\r\n`,
  `GET /${"p".repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
  "POST /v1/agent/run HTTP/1.1\r\n",
  "CONNECT x:1 HTTP/1.1\r\nHost: x\r\n\r\n",
  "GET /v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \x7f\x7f\r\n\r\n",
];

const broken: fc.Arbitrary<BrokenPlan> = fc.record({
  kind: fc.constant("broken" as const),
  bytes: fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...BROKEN_TEMPLATES).map(text) },
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 400 }) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...BROKEN_TEMPLATES), fc.integer({ min: 1, max: 60 })).map(([template, cut]) => text(template.slice(0, cut))) },
  ),
  end: fc.boolean(),
});

/** A random mix of well-formed requests (most), oversize bodies and broken bytes. */
export const fuzzPlan: fc.Arbitrary<FuzzPlan> = fc.oneof({ weight: 16, arbitrary: request }, { weight: 2, arbitrary: oversize }, { weight: 2, arbitrary: broken });

/** `count` plans drawn from {@link fuzzPlan} with `seed` (the same seed gives the same plans). */
export function samplePlans(count: number, seed: number): FuzzPlan[] {
  return fc.sample(fuzzPlan, { numRuns: count, seed });
}
