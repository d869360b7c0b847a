import { InMemorySessionStore, encodePolicyHeader } from "rein";
import { createServer } from "./create-server";
import { entries } from "./__fixtures__/agents";
import { withUnsignedPolicyHeaders } from "./__fixtures__/unsigned-headers";

withUnsignedPolicyHeaders();

describe("1,000 concurrent scripted runs on one server", () => {
  it("each with its own budget and session: every result, budget and session holds only its own task", async () => {
    const store = new InMemorySessionStore();
    const app = createServer({ entries, store });
    const runs = Array.from({ length: 1000 }, (_, i) => ({ i, task: `task-${i}-x`, depth: 1 + (i % 5), entry: i % 2 === 0 ? "research" : "stream" }));
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
    const runIds = new Set<string>();
    for (const [i, { status, body }] of answers.entries()) {
      const { task, depth } = runs[i]!;
      expect(status).toBe(200);
      expect(body.result).toBe(`answer about ${task}`);
      expect(body.sessionId).toBe(`session-${i}`);
      expect(body.budget.depth).toBe(depth);
      runIds.add(body.runId);
      const markers = new Set(JSON.stringify(store.readNodes(`session-${i}`)).match(/task-\d+-x/g));
      expect([...markers]).toEqual([task]);
    }
    expect(runIds.size).toBe(1000);
  }, 60_000);
});
