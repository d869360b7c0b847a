import fc from "fast-check";
import { encodePolicyHeader } from "rein";
import { createServer } from "./create-server";
import { Researcher, researcherFactory, Thrower } from "./__fixtures__/agents";
import { withUnsignedPolicyHeaders } from "./__fixtures__/unsigned-headers";

withUnsignedPolicyHeaders();

// Entries whose runs cannot fail upstream (no provider failure → no 502 expected).
const app = createServer({
  entries: { research: [Researcher, "research"], add: [Researcher, "add"], stream: [researcherFactory, "research"], fail: [Thrower, "fail"] },
  maxBodyBytes: 2048,
});

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

const header = fc.oneof(
  fc.constant(undefined),
  headerText,
  budget.map((b) => encodePolicyHeader(b)),
  fc.tuple(budget, headerText).map(([b, tail]) => encodePolicyHeader(b) + tail),
  budget.map((b) => encodePolicyHeader(b).slice(1)),
);

const entry = fc.oneof(fc.constantFrom("research", "add", "stream", "fail", "nope", "__proto__", "constructor", ""), fc.string({ maxLength: 20 }));
const body = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.json({ maxDepth: 3 }),
  fc.record({ entry, task: fc.jsonValue({ maxDepth: 2 }), sessionId: fc.oneof(fc.string({ maxLength: 20 }), fc.integer()) }, { requiredKeys: ["entry"] }).map((value) => JSON.stringify(value)),
  fc.record({ entry, args: fc.oneof(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }), fc.jsonValue({ maxDepth: 1 })) }, { requiredKeys: ["entry"] }).map((value) => JSON.stringify(value)),
  fc.string({ minLength: 2049, maxLength: 2100 }),
);

describe("fuzz", () => {
  it("10,000 random X-Agent-Policy headers and bodies: only 200 or a typed 4xx, never a 5xx", async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(header, body, fc.constantFrom("application/json", "text/event-stream"), async (policy, payload, accept) => {
        const headers: Record<string, string> = { "content-type": "application/json", accept };
        if (policy !== undefined) headers["X-Agent-Policy"] = policy;
        const response = await app.request("/v1/agent/run", { method: "POST", headers, body: payload });
        seen.set(response.status, (seen.get(response.status) ?? 0) + 1);
        if (response.status !== 200) {
          expect(response.status).toBeGreaterThanOrEqual(400);
          expect(response.status).toBeLessThan(500);
          const json = (await response.json()) as { error: { type: string; message: string } };
          expect(typeof json.error.type).toBe("string");
          expect(typeof json.error.message).toBe("string");
        } else {
          await response.text();
        }
      }),
      { numRuns: 10_000 },
    );
    // The generators reach every branch: runs, refusals and each kind of request error.
    for (const status of [200, 400, 403, 404, 413]) expect(seen.get(status) ?? 0).toBeGreaterThan(0);
  }, 120_000);
});

describe("fuzz: the runs routes", () => {
  it("2,000 random run ids, resume bodies, headers and state filters: only 200 or a typed 4xx, never a 5xx", async () => {
    const runId = fc.oneof(fc.constantFrom("no-such-run-id", "x", "__proto__", "%ZZ", "a".repeat(200)), fc.string({ maxLength: 40 }).map(encodeURIComponent));
    const resumeBody = fc.oneof(
      fc.constant(""),
      fc.string({ maxLength: 100 }),
      fc.json({ maxDepth: 2 }),
      fc.record({ codeChangePolicy: fc.oneof(fc.constantFrom("keep_original", "use_latest", ""), fc.jsonValue({ maxDepth: 1 })) }).map((value) => JSON.stringify(value)),
      fc.string({ minLength: 2049, maxLength: 2100 }),
    );
    const state = fc.oneof(fc.constant(undefined), fc.constantFrom("running", "error,paused", "", ",", "bogus"), fc.string({ maxLength: 30 }));
    await fc.assert(
      fc.asyncProperty(runId, resumeBody, header, state, async (id, payload, policy, filter) => {
        const headers: Record<string, string> = { "content-type": "application/json" };
        if (policy !== undefined) headers["X-Agent-Policy"] = policy;
        const resumed = await app.request(`/v1/runs/${id}/resume`, { method: "POST", headers, body: payload });
        const listed = await app.request(filter === undefined ? "/v1/runs" : `/v1/runs?state=${encodeURIComponent(filter)}`);
        for (const response of [resumed, listed]) {
          expect(response.status === 200 || (response.status >= 400 && response.status < 500)).toBe(true);
          if (response.status !== 200) expect(((await response.json()) as { error: { type: string } }).error.type).toEqual(expect.any(String));
        }
      }),
      { numRuns: 2_000 },
    );
  }, 60_000);
});
