import { InMemorySessionStore, encodePolicyHeader } from "rein";
import { createServer } from "./create-server";
import { entries } from "./__fixtures__/agents";
import { withUnsignedPolicyHeaders } from "./__fixtures__/unsigned-headers";

withUnsignedPolicyHeaders();

/**
 * Runs in flight at once. Every request is started before any answers (each handler runs to its first await), so
 * the runs' steps interleave at every await: state shared by mistake between two runs (a scope, a budget, a session
 * writer, a result) shows with two, and each of 200 runs shares the server with 199 others. 1,000 cost five times
 * the CPU (about 9 s of a full run) and proved nothing 200 did not; REIN_CONCURRENT_RUNS=1000 for a larger run.
 */
const RUNS = Number(process.env["REIN_CONCURRENT_RUNS"] ?? 200);

describe("200 concurrent scripted runs on one server", () => {
  it("each with its own budget and session: every result, budget and session holds only its own task", async () => {
    const store = new InMemorySessionStore();
    const app = createServer({ entries, store });
    const runs = Array.from({ length: RUNS }, (_, i) => ({ i, task: `task-${i}-x`, depth: 1 + (i % 5), entry: i % 2 === 0 ? "research" : "stream" }));
    const answers = await Promise.all(
      runs.map(async ({ i, task, depth, entry }) => {
        const response = await app.request("/v1/agent/run", {
          method: "POST",
          headers: { "content-type": "application/json", "X-Agent-Policy": encodePolicyHeader({ depth }) },
          body: JSON.stringify({ entry, task, sessionId: `session-${i}` }),
        });
        return { status: response.status, body: (await response.json()) as { result: string; sessionId: string; budget: { depth: number }; runId: string } };
      }),
    );
    // One toEqual over every run (jest's expect costs about 50 µs a call): the diff names each run that differs.
    const seen = answers.map(({ status, body }, i) => ({
      status,
      result: body.result,
      sessionId: body.sessionId,
      depth: body.budget.depth,
      markers: [...new Set(JSON.stringify(store.readNodes(`session-${i}`)).match(/task-\d+-x/g))],
    }));
    expect(seen).toEqual(runs.map(({ i, task, depth }) => ({ status: 200, result: `answer about ${task}`, sessionId: `session-${i}`, depth, markers: [task] })));
    expect(new Set(answers.map(({ body }) => body.runId)).size).toBe(RUNS);
  }, 60_000);
});
