import { InMemorySessionStore } from "rein";
import { createServer } from "../create-server";
import { InMemoryApiKeyStore } from "../auth";
import type { SpendCaps } from "rein";
import { answerFactory } from "../__fixtures__/spend-agents";
import { MemoryQueue } from "../__fixtures__/memory-queue";
import { withUnsignedPolicyHeaders } from "../__fixtures__/unsigned-headers";
import { startBackgroundWorker } from "./background-worker";

withUnsignedPolicyHeaders();

/** A server with a queue in memory, one key capped by `caps`, and a count of the model requests its entry makes. */
async function setUp(caps: SpendCaps) {
  const keys = new InMemoryApiKeyStore();
  const store = new InMemorySessionStore();
  const queue = new MemoryQueue();
  const counted = { modelRequests: 0 };
  const entries = {
    answer: [
      (init: Parameters<typeof answerFactory>[0]) =>
        answerFactory({ ...init, onEvent: (event) => (event.type === "model-request" ? counted.modelRequests++ : undefined, init.onEvent?.(event)) }),
      "answer",
    ],
  } as const;
  const app = createServer({ entries, store, queue, auth: { keys }, mintRootBudget: true, onInternalError: () => undefined });
  const { key, record } = await keys.create({ name: "capped", scopes: ["run", "read"], caps });
  const run = (headers: Record<string, string> = { prefer: "respond-async" }) =>
    app.request("/v1/agent/run", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers }, body: JSON.stringify({ entry: "answer", task: "x" }) });
  const work = async (withKeys = true) => {
    const worker = await startBackgroundWorker({ entries, store, queue, ...(withKeys ? { keys } : {}), onInternalError: () => undefined });
    await Promise.all(queue.done);
    await worker.stop();
  };
  const runState = async (runId: string) => (await app.request(`/v1/runs/${runId}`, { headers: { authorization: `Bearer ${key}` } })).json() as Promise<{ state: string; error?: { type: string; name: string; message: string } }>;
  return { keys, queue, counted, run, work, runState, keyId: record.id };
}

describe("background runs of a capped API key (Prefer: respond-async)", () => {
  it("are refused at submit over a cap exactly as in the request: 429 budget_exhausted with Retry-After, nothing queued, no model request", async () => {
    const { queue, counted, run, work } = await setUp({ tokens: 0 });
    expect((await run({})).status).toBe(429);
    const accepted = await run();
    expect(accepted.status).toBe(429);
    expect(Number(accepted.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await accepted.json()) as { error: { type: string } }).error.type).toBe("budget_exhausted");
    expect(queue.records.size).toBe(0);
    await work();
    expect(counted.modelRequests).toBe(0);
  });

  it("hold the key's run slot from submit until the worker ends the run: a second run is 429 while the first is queued", async () => {
    const { keys, counted, run, work, runState, keyId } = await setUp({ concurrentRuns: 1, tokens: 100_000 });
    const first = await run();
    expect(first.status).toBe(202);
    const second = await run();
    expect(second.status).toBe(429);
    expect((await keys.spendOf(keyId))?.activeRuns).toBe(1);
    await work();
    const { runId } = (await first.json()) as { runId: string };
    expect((await runState(runId)).state).toBe("completed");
    // The worker reserved and settled the run's one request (10 + 5 tokens) against the key, and gave the slot back.
    expect(counted.modelRequests).toBe(1);
    expect(await keys.spendOf(keyId)).toMatchObject({ activeRuns: 0, tokensSpent: 15, tokensReserved: 0 });
    expect((await run()).status).toBe(202);
  });

  it("end with the cap's ReachError recorded when the worker's reservation is refused mid-run, the request never sent", async () => {
    // 100 tokens: the run may start (nothing spent yet), but a request reserves its input estimate plus 4,096 output tokens.
    const { keys, counted, run, work, runState, keyId } = await setUp({ tokens: 100 });
    const accepted = await run();
    expect(accepted.status).toBe(202);
    await work();
    const { runId } = (await accepted.json()) as { runId: string };
    const state = await runState(runId);
    expect(state.state).toBe("error");
    expect(state.error).toMatchObject({ type: "budget_exhausted", name: "SpendCapExceededError" });
    expect(counted.modelRequests).toBe(0);
    expect(await keys.spendOf(keyId)).toMatchObject({ activeRuns: 0, tokensSpent: 0, tokensReserved: 0 });
  });

  it("do not execute once their key is revoked, nor on a worker that has no key store (fail closed)", async () => {
    const revoked = await setUp({ tokens: 100_000 });
    const queuedThenRevoked = await revoked.run();
    expect(queuedThenRevoked.status).toBe(202);
    const { runId } = (await queuedThenRevoked.json()) as { runId: string };
    await revoked.keys.revoke("capped");
    await revoked.work();
    expect(revoked.counted.modelRequests).toBe(0);
    expect(revoked.queue.records.get(runId)?.outcome).toMatchObject({ status: "error", error: { type: "budget_exhausted" } });

    const keyless = await setUp({ tokens: 100_000 });
    const accepted = await keyless.run();
    expect(accepted.status).toBe(202);
    await keyless.work(false);
    expect(keyless.counted.modelRequests).toBe(0);
    const state = await keyless.runState(((await accepted.json()) as { runId: string }).runId);
    expect(state).toMatchObject({ state: "error", error: { type: "reach_exceeded" } });
    expect(state.error?.message).toMatch(/no key store/);
  });
});
