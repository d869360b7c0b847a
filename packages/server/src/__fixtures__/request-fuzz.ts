/**
 * The in-process request fuzz of the server's routes (fuzz.test.ts, and
 * bench/server-request-fuzz.ts at 10,000 requests): the app it attacks and the
 * random requests — X-Agent-Policy headers (absent, garbage, valid, valid with
 * a tail, truncated), run bodies (text, JSON, run requests with odd entries,
 * tasks, args and session ids, bodies over the 2 KB limit), run ids, resume
 * bodies and state filters.
 */
import fc from "fast-check";
import { encodePolicyHeader } from "rein";
import { createServer } from "../create-server";
import { Researcher, researcherFactory, Thrower } from "./agents";

/** A server over entries whose runs cannot fail upstream (no provider failure, so no 502 expected), 2 KB bodies. */
export function requestFuzzApp(): ReturnType<typeof createServer> {
  return createServer({
    entries: { research: [Researcher, "research"], add: [Researcher, "add"], stream: [researcherFactory, "research"], fail: [Thrower, "fail"] },
    maxBodyBytes: 2048,
  });
}

const budget = fc.record(
  {
    depth: fc.oneof(fc.integer({ min: 0, max: 10 }), fc.constant(Infinity)),
    tokens: fc.integer({ min: 0, max: 1e6 }),
    costUsd: fc.double({ min: 0, max: 100, noNaN: true }),
    memoryMb: fc.integer({ min: 1, max: 4096 }),
    zones: fc.array(fc.constantFrom("local", "docker-network", "cloud"), { maxLength: 3 }),
    deadline: fc.integer({ min: 0, max: Date.now() + 1e9 }),
  },
  { requiredKeys: ["depth"] },
);

// Header values a Headers object accepts: visible ASCII and spaces (no control characters).
const headerText = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 300 });

/** An X-Agent-Policy header value, or none (`undefined`). */
export const policyHeader = fc.oneof(
  fc.constant(undefined),
  headerText,
  budget.map((b) => encodePolicyHeader(b)),
  fc.tuple(budget, headerText).map(([b, tail]) => encodePolicyHeader(b) + tail),
  budget.map((b) => encodePolicyHeader(b).slice(1)),
);

const entry = fc.oneof(fc.constantFrom("research", "add", "stream", "fail", "nope", "__proto__", "constructor", ""), fc.string({ maxLength: 20 }));

/** A body for POST /v1/agent/run. */
export const runBody = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.json({ maxDepth: 3 }),
  fc.record({ entry, task: fc.jsonValue({ maxDepth: 2 }), sessionId: fc.oneof(fc.string({ maxLength: 20 }), fc.integer()) }, { requiredKeys: ["entry"] }).map((value) => JSON.stringify(value)),
  fc.record({ entry, args: fc.oneof(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }), fc.jsonValue({ maxDepth: 1 })) }, { requiredKeys: ["entry"] }).map((value) => JSON.stringify(value)),
  fc.string({ minLength: 2049, maxLength: 2100 }),
);

/** The Accept header of a run request. */
export const runAccept = fc.constantFrom("application/json", "text/event-stream");

/** A run id for /v1/runs/:id/resume (URL-encoded). */
export const runId = fc.oneof(fc.constantFrom("no-such-run-id", "x", "__proto__", "%ZZ", "a".repeat(200)), fc.string({ maxLength: 40 }).map(encodeURIComponent));

/** A body for POST /v1/runs/:id/resume. */
export const resumeBody = fc.oneof(
  fc.constant(""),
  fc.string({ maxLength: 100 }),
  fc.json({ maxDepth: 2 }),
  fc.record({ codeChangePolicy: fc.oneof(fc.constantFrom("keep_original", "use_latest", ""), fc.jsonValue({ maxDepth: 1 })) }).map((value) => JSON.stringify(value)),
  fc.string({ minLength: 2049, maxLength: 2100 }),
);

/** A `state` filter for GET /v1/runs, or none (`undefined`). */
export const stateFilter = fc.oneof(fc.constant(undefined), fc.constantFrom("running", "error,paused", "", ",", "bogus"), fc.string({ maxLength: 30 }));
