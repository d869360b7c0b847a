import fc from "fast-check";
import { withUnsignedPolicyHeaders } from "./__fixtures__/unsigned-headers";
import { policyHeader as header, requestFuzzApp, resumeBody, runAccept, runBody as body, runId, stateFilter as state } from "./__fixtures__/request-fuzz";
import { samplePlans, type FuzzPlan } from "./__fixtures__/socket-fuzz-plans";
import { rssOf, runFuzz, startFuzzServer, type FuzzOutcome, type FuzzServer } from "./__fixtures__/socket-fuzz";

withUnsignedPolicyHeaders();

const app = requestFuzzApp();

// 2,000 and 500 random requests a run (new ones each run: fast-check seeds from the clock) reach every kind of
// answer; bench/server-request-fuzz.ts sends the same requests 10,000 and 2,000 at a time.
describe("fuzz", () => {
  it("2,000 random X-Agent-Policy headers and bodies: only 200 or a typed 4xx, never a 5xx", async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(header, body, runAccept, async (policy, payload, accept) => {
        const headers: Record<string, string> = { "content-type": "application/json", accept };
        if (policy !== undefined) headers["X-Agent-Policy"] = policy;
        const response = await app.request("/v1/agent/run", { method: "POST", headers, body: payload });
        seen.set(response.status, (seen.get(response.status) ?? 0) + 1);
        if (response.status !== 200) {
          const json = (await response.json()) as { error: { type: string; message: string } };
          // One expect per request (jest's expect costs about 50 µs a call): a 4xx with a typed error.
          expect({ status: response.status >= 400 && response.status < 500 ? "4xx" : response.status, type: typeof json.error.type, message: typeof json.error.message }).toEqual({
            status: "4xx",
            type: "string",
            message: "string",
          });
        } else {
          await response.text();
        }
      }),
      { numRuns: 2_000 },
    );
    // The generators reach every branch: runs, refusals and each kind of request error.
    for (const status of [200, 400, 403, 404, 413]) expect(seen.get(status) ?? 0).toBeGreaterThan(0);
  }, 120_000);
});

describe("fuzz: the runs routes", () => {
  it("500 random run ids, resume bodies, headers and state filters: only 200 or a typed 4xx, never a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(runId, resumeBody, header, state, async (id, payload, policy, filter) => {
        const headers: Record<string, string> = { "content-type": "application/json" };
        if (policy !== undefined) headers["X-Agent-Policy"] = policy;
        const resumed = await app.request(`/v1/runs/${id}/resume`, { method: "POST", headers, body: payload });
        const listed = await app.request(filter === undefined ? "/v1/runs" : `/v1/runs?state=${encodeURIComponent(filter)}`);
        // One expect per pair: each answer a 200, or a 4xx with a typed error.
        const answers: { status: number | "200 or 4xx"; type: string }[] = [];
        for (const response of [resumed, listed]) {
          const status = response.status === 200 || (response.status >= 400 && response.status < 500) ? "200 or 4xx" : response.status;
          answers.push({ status, type: response.status === 200 ? "string" : typeof ((await response.json()) as { error: { type: string } }).error.type });
        }
        expect(answers).toEqual([{ status: "200 or 4xx", type: "string" }, { status: "200 or 4xx", type: "string" }]);
      }),
      { numRuns: 500 },
    );
  }, 60_000);
});

describe("socket fuzz of a server process with two API keys", () => {
  let server: FuzzServer;
  beforeAll(async () => {
    server = await startFuzzServer();
  }, 120_000);
  afterAll(() => server.stop());

  it("400 random requests over raw TCP — both keys, no or wrong keys, hang-ups mid-body/mid-answer/mid-SSE, oversize chunked bodies, slow and stalled bodies, broken heads: no 5xx, nothing hangs, the process lives", async () => {
    const seed = Date.now() % 2 ** 31;
    const plans = samplePlans(400, seed);
    const report = await runFuzz(server, plans, { concurrency: 8 });
    const shown = (outcomes: readonly FuzzOutcome[]) => outcomes.map((outcome) => `seed ${seed}: ${JSON.stringify(outcome.plan).slice(0, 300)} -> ${outcome.statuses.join(",")}`);
    expect(shown(report.serverErrors)).toEqual([]);
    expect(shown(report.hung)).toEqual([]);
    expect(server.child.exitCode).toBeNull();
    // Nothing refused got through: an oversize body, a broken head, a request without a valid key (but /healthz) is never a 2xx.
    const refused = report.outcomes.filter(({ plan }) => plan.kind !== "request" || (plan.auth !== "a" && plan.auth !== "b" && plan.route !== "healthz"));
    expect(shown(refused.filter((outcome) => outcome.statuses.some((status) => status < 300)))).toEqual([]);
    // The mix reached every kind of answer: runs done, requests refused by auth, parser, size and time limits, and hang-ups.
    for (const status of ["200", "400", "401", "404", "408", "413", "closed"]) expect(report.statuses[status] ?? 0).toBeGreaterThan(0);
    for (const who of ["a", "b"]) expect(report.outcomes.some(({ plan, statuses }) => plan.kind === "request" && plan.auth === who && statuses.includes(200))).toBe(true);
    // Every run ends, hung-up ones included (they are cancelled), and the server answers.
    let health: { status: string; runs: number };
    do health = (await (await fetch(`${server.url}/healthz`)).json()) as { status: string; runs: number };
    while (health.runs > 0);
    expect(health).toEqual({ status: "ok", runs: 0 });
  }, 300_000);

  it("512 MB of chunked bodies offered, 16 MB each, 8 at a time: each gets its 413 at 16 KB and the server's peak RSS grows by far less than what was offered", async () => {
    const before = rssOf(server.child.pid!).rss;
    const plans: FuzzPlan[] = Array.from({ length: 32 }, (_, i) => ({ kind: "oversize", auth: i % 2 === 0 ? "a" : "b", bytes: 16 * 1024 * 1024, chunked: true, finish: false }));
    const report = await runFuzz(server, plans, { concurrency: 8 });
    // 413, or the connection closed under a client still writing (the 413 lost in its reset).
    for (const outcome of report.outcomes) expect(outcome.statuses.every((status) => status === 413)).toBe(true);
    expect(report.statuses["413"] ?? 0).toBeGreaterThan(0);
    expect(report.hung).toEqual([]);
    // A server that buffered the bodies would hold hundreds of MB; one that stops at the limit holds a few.
    expect(rssOf(server.child.pid!).peak - before).toBeLessThan(128 * 1024 * 1024);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  }, 300_000);
});
