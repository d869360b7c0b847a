/**
 * Spend caps per API key over HTTP (DESIGN 5.2): over a cap a run is a 429
 * `budget_exhausted` with `Retry-After`, at its start (runs at once, runs
 * per minute, tokens spent) or in the middle (a model request that cannot
 * be reserved); a run refused mid-way keeps what it recorded and what it
 * was charged; keys without caps and other keys are not touched; requests
 * in flight at once cannot take a key past its cap with output it did not
 * reserve, and a request cancelled once sent is charged, not given back.
 */
import { Agent, InMemorySessionStore, Runtime, SessionStoreError, type ModelCallOptions, type ModelProvider, type ModelRequest, type ModelResponse, type StoredSpend } from "rein";
import type { EntryInit } from "./entries";
import { createServer } from "./create-server";
import { InMemoryApiKeyStore } from "./auth";
import { answerFactory, Holder, NOTER_USAGE, noterFactory } from "./__fixtures__/spend-agents";
import { withUnsignedPolicyHeaders } from "./__fixtures__/unsigned-headers";

withUnsignedPolicyHeaders();

const entries = { notes: [noterFactory, "work"], answer: [answerFactory, "answer"], hold: [Holder, "hold"] } as const;

function setUp() {
  const keys = new InMemoryApiKeyStore();
  const store = new InMemorySessionStore();
  const app = createServer({ entries, store, auth: { keys }, mintRootBudget: true, onInternalError: () => undefined });
  const run = (key: string, body: object, headers: Record<string, string> = {}) =>
    app.request("/v1/agent/run", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  return { keys, store, app, run };
}

describe("spend caps per key over HTTP", () => {
  it("a request that cannot be reserved stops the run mid-way: 429 budget_exhausted with Retry-After; the run keeps its three answered requests, recorded and charged", async () => {
    const { keys, app, run } = setUp();
    // Each request is reserved for its input estimate + 4,096 output tokens and settles to 2,000:
    // 0+~4.2k, 2k+~4.2k and 4k+~4.3k fit in 9,000; 6k + ~4.3k does not.
    const { key, record } = await keys.create({ name: "capped", scopes: ["run", "read"], caps: { tokens: 9_000 } });
    const response = await run(key, { entry: "notes", task: "Write notes.", sessionId: "s-notes" });
    expect(response.status).toBe(429);
    const retryAfter = Number(response.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    const body = (await response.json()) as { status: string; usage: { inputTokens: number; outputTokens: number }; error: { type: string; name: string; message: string } };
    expect(body).toMatchObject({ status: "error", sessionId: "s-notes", error: { type: "budget_exhausted", name: "SpendCapExceededError" } });
    expect(body.error.message).toMatch(/^spend cap: this key cannot reserve \d+ tokens more: 6000 tokens of its cap of 9000 tokens are spent or held by requests in flight; retry in \d+ s/);
    expect(body.usage).toEqual({ inputTokens: 3 * NOTER_USAGE.inputTokens, outputTokens: 3 * NOTER_USAGE.outputTokens });
    // What the run did before the refusal stays: three llm nodes (and the three notes they asked for), and the key is charged exactly those.
    const session = (await (await app.request("/v1/sessions/s-notes", { headers: { authorization: `Bearer ${key}` } })).json()) as { nodes: { role: string; name: string }[] };
    expect(session.nodes.filter((node) => node.role === "llm")).toHaveLength(3);
    expect(session.nodes.filter((node) => node.role === "code" && node.name === "Noter.note")).toHaveLength(3);
    expect(await keys.spendOf(record.id)).toMatchObject({ tokensSpent: 6_000, tokensReserved: 0, activeRuns: 0 });
  });

  it("with the period's tokens all spent a run is refused at its start: 429 budget_exhausted, Retry-After the seconds left in the period, no model request made", async () => {
    const { keys, run } = setUp();
    const { key, record } = await keys.create({ name: "small", scopes: ["run"], caps: { tokens: 4_200, periodMs: 3_600_000 } });
    // The cap spent out, as another instance of the server would have done.
    await keys.reserve(record.id, { tokens: 4_200, costMicroUsd: 0, holdId: "elsewhere" });
    await keys.settle(record.id, "elsewhere", { tokens: 4_200, costMicroUsd: 0 });
    const before = Date.now();
    const response = await run(key, { entry: "answer", task: "x" });
    expect(response.status).toBe(429);
    const left = Math.ceil((Math.floor(before / 3_600_000) * 3_600_000 + 3_600_000 - before) / 1000);
    expect(Number(response.headers.get("retry-after"))).toBeLessThanOrEqual(left);
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(left - 5);
    expect(await response.json()).toEqual({ error: { type: "budget_exhausted", message: expect.stringContaining("has used its cap of 4200 tokens for this period (4200 tokens)") } });
    expect(await keys.spendOf(record.id)).toMatchObject({ tokensSpent: 4_200, activeRuns: 0 });
  });

  it("concurrentRuns: a second run while the first holds its slot is 429 with Retry-After 1; once it ends, runs start again", async () => {
    const { keys, app, run } = setUp();
    const { key } = await keys.create({ name: "one-at-a-time", scopes: ["run"], caps: { concurrentRuns: 1 } });
    const holding = run(key, { entry: "hold" }, { "x-run-id": "hold-run-1" });
    // Wait until the first run holds its slot (the server lists it in flight).
    for (;;) {
      const health = (await (await app.request("/healthz")).json()) as { runs: number };
      if (health.runs === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const refused = await run(key, { entry: "answer", task: "x" });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(await refused.json()).toMatchObject({ error: { type: "budget_exhausted", message: expect.stringContaining("cap of concurrent runs (1)") } });
    expect((await app.request("/v1/runs/hold-run-1/cancel", { method: "POST", headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    expect((await holding).status).toBe(200);
    // The slot comes back when the run's answer is done (its end is written right after).
    for (let attempt = 0; ; attempt++) {
      const again = await run(key, { entry: "answer", task: "x" });
      if (again.status === 200 || attempt > 100) {
        expect(again.status).toBe(200);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  });

  it("requestsPerMinute: the third run of a minute is 429 with Retry-After the seconds left in the minute", async () => {
    const { keys, run } = setUp();
    const { key } = await keys.create({ name: "slow", scopes: ["run"], caps: { requestsPerMinute: 2 } });
    // Three runs in one UTC minute: tried again in the next minute if the clock crossed one meanwhile.
    for (;;) {
      const minute = Math.floor(Date.now() / 60_000);
      const statuses = [];
      for (let n = 0; n < 3; n++) statuses.push(await run(key, { entry: "answer", task: "x" }));
      if (Math.floor(Date.now() / 60_000) !== minute) continue;
      expect(statuses.map((response) => response.status)).toEqual([200, 200, 429]);
      const retryAfter = Number(statuses[2]!.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(await statuses[2]!.json()).toMatchObject({ error: { type: "budget_exhausted", message: expect.stringContaining("started 2 run(s) this minute, its cap (2 per minute)") } });
      break;
    }
  });

  it("a key without caps and another key are not held by a capped key's spend; a cost cap refuses a model without a price", async () => {
    const { keys, run } = setUp();
    const capped = await keys.create({ name: "capped", scopes: ["run"], caps: { tokens: 100 } });
    const open = await keys.create({ name: "open", scopes: ["run"] });
    const priced = await keys.create({ name: "priced", scopes: ["run"], caps: { costUsd: 1 } });
    // 100 tokens cannot hold one request's reservation (its output limit alone is 4,096).
    const refused = await run(capped.key, { entry: "answer", task: "x" });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: { type: "budget_exhausted", message: expect.stringContaining("more than the cap ever allows") } });
    expect((await run(open.key, { entry: "answer", task: "x" })).status).toBe(200);
    expect(await keys.spendOf(open.record.id)).toMatchObject({ tokensSpent: 0, activeRuns: 0 });
    // The entry's runtime has no pricing: a cost cap cannot hold its requests (a reach refusal, 403).
    const unpriced = await run(priced.key, { entry: "answer", task: "x" });
    expect(unpriced.status).toBe(403);
    expect(await unpriced.json()).toMatchObject({ error: { type: "reach_exceeded", message: expect.stringContaining("no price in the runtime's pricing table") } });
  });

  it("a key store that fails is a 503 store_unavailable naming nothing of it, at the start and mid-run; the fault goes to onInternalError", async () => {
    const faults: unknown[] = [];
    const fault = () => new SessionStoreError("connect ECONNREFUSED db.internal:5432 (schema rein)", "postgres://db.internal:5432/app (schema rein)");
    class FailingKeys extends InMemoryApiKeyStore {
      failStart = false;
      override async startRun(id: string, holdId: string, now?: number) {
        if (this.failStart) throw fault();
        return super.startRun(id, holdId, now);
      }
      override async reserve(_id: string, _hold: StoredSpend & { holdId: string }): Promise<undefined> {
        throw fault();
      }
    }
    const keys = new FailingKeys();
    const app = createServer({ entries, store: new InMemorySessionStore(), auth: { keys }, mintRootBudget: true, onInternalError: (error) => faults.push(error) });
    const { key } = await keys.create({ name: "capped", scopes: ["run"], caps: { tokens: 100_000 } });
    const run = () => app.request("/v1/agent/run", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ entry: "answer", task: "x" }) });
    const midRun = await run();
    expect(midRun.status).toBe(503);
    const body = JSON.stringify(await midRun.json());
    expect(body).toContain('"type":"store_unavailable"');
    expect(body).not.toContain("db.internal");
    keys.failStart = true;
    const atStart = await run();
    expect(atStart.status).toBe(503);
    expect(await atStart.json()).toEqual({ error: { type: "store_unavailable", message: "the session store is unavailable; retry later" } });
    expect(faults).toHaveLength(2);
  });
});

class Answerer extends Agent {
  async answer(task: string): Promise<string> {
    return this.ask(task);
  }
}

/** A server with one entry, `answer`, whose runtime asks `provider`; an in-memory key store. */
function serverOf(provider: ModelProvider) {
  const keys = new InMemoryApiKeyStore();
  const entries = { answer: [({ onEvent }: EntryInit) => new Answerer({ runtime: new Runtime({ provider, onEvent }) }), "answer"] } as const;
  const app = createServer({ entries, store: new InMemorySessionStore(), auth: { keys }, mintRootBudget: true, onInternalError: () => undefined });
  const run = (key: string, headers: Record<string, string> = {}) =>
    app.request("/v1/agent/run", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers }, body: JSON.stringify({ entry: "answer", task: "x" }) });
  return { keys, app, run };
}

/** A provider that answers once `together` requests wait at once, each `outputTokens` long unless the request's maxOutputTokens is lower (as real providers do). */
function talkativeProvider(together: number, outputTokens: number): ModelProvider {
  const waiting: (() => void)[] = [];
  return {
    specificationVersion: "rein-model-v1",
    providerId: "talkative",
    modelId: "m",
    async complete(request: ModelRequest): Promise<ModelResponse> {
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        if (waiting.length >= together) waiting.splice(0).forEach((go) => go());
      });
      const output = Math.min(request.maxOutputTokens ?? Number.POSITIVE_INFINITY, outputTokens);
      return { content: [{ type: "text", text: "a long answer" }], stopReason: "end_turn", usage: { inputTokens: 10, outputTokens: output } };
    },
    async *stream(request: ModelRequest, options?: ModelCallOptions) {
      yield { type: "response" as const, response: await this.complete(request, options) };
    },
  };
}

describe("spend caps per key: requests in flight and cancelled requests", () => {
  it("four requests in flight at once, whose model would write 10,000 tokens each, keep the key within its cap of 20,000: each asks for the 4,096 output tokens it reserved", async () => {
    const { keys, run } = serverOf(talkativeProvider(4, 10_000));
    const { key, record } = await keys.create({ name: "capped", scopes: ["run"], caps: { tokens: 20_000 } });
    // Four reservations of ~4.1k fit in 20,000, so all four requests are sent before any is answered.
    const answers = await Promise.all([run(key), run(key), run(key), run(key)]);
    expect(answers.map((response) => response.status)).toEqual([200, 200, 200, 200]);
    expect(await keys.spendOf(record.id)).toMatchObject({ tokensSpent: 4 * (10 + 4_096), tokensReserved: 0 });
  });

  it("a request the provider received and the client then cancelled is charged as reserved; it is not given back", async () => {
    let received!: () => void;
    const wasReceived = new Promise<void>((resolve) => (received = resolve));
    const { keys, app, run } = serverOf({
      specificationVersion: "rein-model-v1",
      providerId: "hanging",
      modelId: "m",
      complete(_request: ModelRequest, options?: ModelCallOptions): Promise<ModelResponse> {
        received();
        return new Promise((_, reject) => options?.signal?.addEventListener("abort", () => reject(options.signal!.reason), { once: true }));
      },
      async *stream(request: ModelRequest, options?: ModelCallOptions) {
        yield { type: "response" as const, response: await this.complete(request, options) };
      },
    });
    const { key, record } = await keys.create({ name: "capped", scopes: ["run"], caps: { tokens: 100_000 } });
    const running = run(key, { "x-run-id": "cancelled-after-send" });
    await wasReceived;
    expect((await app.request("/v1/runs/cancelled-after-send/cancel", { method: "POST", headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    expect(await (await running).json()).toMatchObject({ status: "cancelled" });
    // The settle lands right after the run's answer: wait for the hold to go.
    for (let turn = 0; turn < 200 && (await keys.spendOf(record.id))!.tokensReserved > 0; turn++) await new Promise((resolve) => setTimeout(resolve, 5));
    const spend = (await keys.spendOf(record.id))!;
    expect(spend.tokensReserved).toBe(0);
    // Its input estimate plus the 4,096 output tokens it was reserved for.
    expect(spend.tokensSpent).toBeGreaterThan(4_096);
  });
});
