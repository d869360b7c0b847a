import { Agent, InMemorySessionStore, Runtime, ScriptedProvider, type ModelProvider, type ModelRequest, type TurnContinuation, type TurnResult } from "rein";
import { InMemoryApiKeyStore } from "./auth";
import { createServer } from "./create-server";
import { serve } from "./serve";
import { WaitingProvider } from "./__fixtures__/waiting-provider";
import { Holder } from "./__fixtures__/spend-agents";
import { deployments, inspectorEntries } from "./__fixtures__/inspector-agents";
import { withUnsignedPolicyHeaders } from "./__fixtures__/unsigned-headers";

withUnsignedPolicyHeaders();

type App = ReturnType<typeof createServer>;

const run = (app: App, runId: string, entry: string, headers: Record<string, string> = {}) =>
  app.request("/v1/agent/run", {
    method: "POST",
    headers: { "content-type": "application/json", "x-run-id": runId, ...headers },
    body: JSON.stringify({ entry, task: "Deploy api." }),
  });

const healthz = async (app: App) => (await (await app.request("/healthz")).json()) as { runs: number };

/** Waits (bounded by the test's timeout) until the server counts `count` runs in flight. */
async function inFlight(app: App, count: number): Promise<void> {
  while ((await healthz(app)).runs !== count) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe("a run in flight: one id, one slot (flight.ts)", () => {
  it("two requests naming one X-Run-Id at once: the second is refused 400, the first is the one run, cancelled by that id", async () => {
    const app = createServer({ entries: { hold: [Holder, "hold"] }, store: new InMemorySessionStore(), mintRootBudget: true });
    const [first, second] = [run(app, "same-run-id-1", "hold"), run(app, "same-run-id-1", "hold")];
    const refused = await Promise.race([first, second]);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { type: "invalid_run_id" } });
    expect((await healthz(app)).runs).toBe(1);
    expect((await app.request("/v1/runs/same-run-id-1/cancel", { method: "POST" })).status).toBe(200);
    // Both requests have ended: none is left running where no cancel, /healthz or close() can reach it.
    const statuses = (await Promise.all([first, second])).map((response) => response.status).sort();
    expect(statuses).toEqual([200, 400]);
    expect((await healthz(app)).runs).toBe(0);
  });

  it("a request refused by its key's caps (429) lets its X-Run-Id go: the id is free for the next request", async () => {
    const keys = new InMemoryApiKeyStore();
    const { key } = await keys.create({ name: "one-at-a-time", scopes: ["run", "read"], caps: { concurrentRuns: 1 } });
    const auth = { authorization: `Bearer ${key}` };
    const app = createServer({ entries: { hold: [Holder, "hold"] }, store: new InMemorySessionStore(), mintRootBudget: true, auth: { keys } });
    const holding = run(app, "holding-run-1", "hold", auth);
    await inFlight(app, 1);
    const refused = await run(app, "waiting-run-1", "hold", auth);
    expect(refused.status).toBe(429);
    await app.request("/v1/runs/holding-run-1/cancel", { method: "POST", headers: auth });
    expect((await holding).status).toBe(200);
    const again = run(app, "waiting-run-1", "hold", auth);
    await inFlight(app, 1);
    await app.request("/v1/runs/waiting-run-1/cancel", { method: "POST", headers: auth });
    expect(await (await again).json()).toMatchObject({ runId: "waiting-run-1", status: "cancelled" });
  });

  it("a paused turn resumed by an approval takes a run slot of its key: over the cap the answer is 429 and the call stays waiting; answered later, the turn resumes once", async () => {
    deployments.length = 0;
    const keys = new InMemoryApiKeyStore();
    const { key, record } = await keys.create({ name: "one-at-a-time", scopes: ["run", "read"], caps: { concurrentRuns: 1 } });
    const auth = { authorization: `Bearer ${key}` };
    const app = createServer({ entries: { ...inspectorEntries, hold: [Holder, "hold"] }, store: new InMemorySessionStore(), mintRootBudget: true, auth: { keys } });
    const paused = (await (await run(app, "paused-run-1", "pause", auth)).json()) as { result: { status: string; continuation: TurnContinuation } };
    expect(paused.result.status).toBe("paused");
    const { toolCallId } = paused.result.continuation.awaiting!;
    const answer = () =>
      app.request(`/v1/runs/paused-run-1/approvals/${encodeURIComponent(toolCallId)}`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ approve: true }),
      });
    // The key's one slot is taken by another run: the resumed turn may not run beside it.
    const holding = run(app, "holding-run-2", "hold", auth);
    await inFlight(app, 1);
    const refused = await answer();
    expect(refused.status).toBe(429);
    expect(deployments).toEqual([]);
    const listed = (await (await app.request("/v1/runs/paused-run-1/approvals", { headers: auth })).json()) as { approvals: { toolCallId: string }[] };
    expect(listed.approvals.map((call) => call.toolCallId)).toEqual([toolCallId]);
    // Once that run has ended, the same answer resumes the turn, in the slot it gives back after.
    await app.request("/v1/runs/holding-run-2/cancel", { method: "POST", headers: auth });
    await holding;
    const answered = await answer();
    expect(answered.status).toBe(200);
    expect(await answered.json()).toMatchObject({ runId: "paused-run-1", toolCallId, approved: true, resumed: { status: "completed" } });
    expect(deployments).toEqual(["api"]);
    expect(await keys.spendOf(record.id)).toMatchObject({ activeRuns: 0 });
  });

  it("the client that answered an approval hangs up while the resumed turn runs: the turn is cancelled, and the provider's request with it", async () => {
    // The first request asks to deploy (approval needed); the request after the approved call waits until cancelled.
    const waiting = new WaitingProvider();
    const first = new ScriptedProvider([{ toolCalls: [{ name: "deploy", input: { service: "api" } }] }], { whenExhausted: "repeat-last" });
    const resumed = (request: ModelRequest) => request.messages.at(-1)?.content.some((block) => block.type === "tool_result") === true;
    const model: ModelProvider = {
      specificationVersion: "rein-model-v1",
      providerId: "gated",
      modelId: "gated",
      complete: (request, options) => (resumed(request) ? waiting.complete(request, options) : first.complete(request, options)),
      stream: (request, options) => (resumed(request) ? waiting.stream(request, options) : first.stream(request, options)),
    };
    class PausingDeployer extends Agent {
      static methodOptions = { deploy: { tool: true, requiresApproval: true, description: "Deploy." } };
      deploy(service: string): string {
        return `deployed ${service}`;
      }
      async operate(task: string): Promise<TurnResult> {
        return this.runTurn({ input: task });
      }
    }
    const app = createServer({ entries: { pause: [() => new PausingDeployer({ runtime: new Runtime({ provider: model }) }), "operate"] }, store: new InMemorySessionStore(), mintRootBudget: true });
    const server = await serve({ app, warn: () => undefined, resumeInterrupted: false, graceMs: 200 });
    try {
      const paused = (await (await fetch(`${server.url}/v1/agent/run`, { method: "POST", headers: { "content-type": "application/json", "x-run-id": "paused-run-3" }, body: JSON.stringify({ entry: "pause", task: "Deploy api." }) })).json()) as { result: { continuation: TurnContinuation } };
      const { toolCallId } = paused.result.continuation.awaiting!;
      const client = new AbortController();
      const answering = fetch(`${server.url}/v1/runs/paused-run-3/approvals/${toolCallId}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ approve: true }), signal: client.signal }).catch((error: Error) => error.name);
      await waiting.started;
      client.abort();
      expect(await answering).toBe("AbortError");
      expect(await waiting.aborted).toMatchObject({ name: "CancelledError", message: "the client disconnected" });
      while (((await (await fetch(`${server.url}/healthz`)).json()) as { runs: number }).runs > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    } finally {
      await server.close();
    }
  });
});

describe("while the server closes, nothing starts (flight.ts)", () => {
  it("does not resume the paused turn (its approved tool must not run during shutdown): 503 shutting_down, as for any run", async () => {
    deployments.length = 0;
    const app = createServer({ entries: { ...inspectorEntries, hold: [Holder, "hold"] }, store: new InMemorySessionStore(), mintRootBudget: true });
    const server = await serve({ app, warn: () => undefined, resumeInterrupted: false, graceMs: 1_000 });
    const post = (path: string, body: object, headers: Record<string, string> = {}) =>
      app.request(path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
    const paused = (await (await post("/v1/agent/run", { entry: "pause", task: "Deploy api." }, { "x-run-id": "paused-close-1" })).json()) as { result: { continuation: TurnContinuation } };
    const { toolCallId } = paused.result.continuation.awaiting!;
    // A run in flight keeps close() in its grace period.
    const holding = post("/v1/agent/run", { entry: "hold" }, { "x-run-id": "holding-close-1" });
    while (((await (await app.request("/healthz")).json()) as { runs: number }).runs !== 1) await new Promise((r) => setTimeout(r, 5));
    const closing = server.close();
    expect(((await (await app.request("/healthz")).json()) as { status: string }).status).toBe("closing");
    const newRun = await post("/v1/agent/run", { entry: "quick", task: "x" });
    const answer = await post(`/v1/runs/paused-close-1/approvals/${encodeURIComponent(toolCallId)}`, { approve: true });
    const answerBody = (await answer.json()) as { error: { type: string } };
    await closing;
    await holding;
    expect(newRun.status).toBe(503);
    expect(answer.status).toBe(503);
    expect(answerBody.error.type).toBe("shutting_down");
    expect(deployments).toEqual([]);
  }, 10_000);
});

describe("a paused turn's X-Run-Id names it until it is answered", () => {
  it("a new run naming the id of a turn paused on an approval is refused (400 invalid_run_id); the paused call stays answerable and its answer resumes the turn", async () => {
    deployments.length = 0;
    const app = createServer({ entries: inspectorEntries, store: new InMemorySessionStore(), mintRootBudget: true });
    const paused = (await (await run(app, "paused-reuse-1", "pause")).json()) as { result: { status: string; continuation: TurnContinuation } };
    expect(paused.result.status).toBe("paused");
    const { toolCallId } = paused.result.continuation.awaiting!;
    const second = await run(app, "paused-reuse-1", "quick");
    expect(second.status).toBe(400);
    expect(((await second.json()) as { error: { type: string; message: string } }).error).toMatchObject({ type: "invalid_run_id", message: expect.stringContaining("paused waiting for an approval") });
    expect((await app.request("/v1/runs/paused-reuse-1/approvals")).status).toBe(200);
    const answer = await app.request(`/v1/runs/paused-reuse-1/approvals/${encodeURIComponent(toolCallId)}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ approve: true }) });
    expect(answer.status).toBe(200);
    expect(deployments).toEqual(["api"]);
    // Answered and ended: the id is free again.
    expect((await run(app, "paused-reuse-1", "quick")).status).toBe(200);
  });
});
