import { Agent, InMemorySessionStore, Runtime, ScriptedProvider, currentSignal, type ModelRequest } from "rein";
import { createServer } from "../create-server";
import type { EntryInit } from "../entries";
import { MemoryQueue } from "../__fixtures__/memory-queue";
import { startBackgroundWorker } from "./background-worker";

/** Asks to deploy (needs approval); once answered, holds the run until it is cancelled. */
class Operator extends Agent {
  static deployed: string[] = [];
  static methodOptions = {
    deploy: { tool: true, requiresApproval: true, description: "Deploy a service." },
    hold: { tool: true, description: "Wait." },
  };
  deploy(service: string): string {
    Operator.deployed.push(service);
    return `deployed ${service}`;
  }
  async hold(): Promise<string> {
    const signal = currentSignal();
    await new Promise((resolve) => signal?.addEventListener("abort", resolve, { once: true }));
    return "released";
  }
  async work(task: string): Promise<string> {
    return this.ask(task);
  }
}

function operator({ onEvent, approveToolCall }: EntryInit): Operator {
  const provider = new ScriptedProvider(
    [
      (request: ModelRequest) =>
        request.messages.some((message) => message.content.some((block) => block.type === "tool_result"))
          ? { toolCalls: [{ name: "hold", input: {} }] }
          : { toolCalls: [{ name: "deploy", input: { service: "api" } }] },
    ],
    { whenExhausted: "repeat-last", recordRequests: false },
  );
  return new Operator({ runtime: new Runtime({ provider, onEvent }), ...(approveToolCall === undefined ? {} : { approveToolCall }) });
}

/** A server and a worker sharing a queue and run channel in memory; the worker denies a waiting call after `approvalTimeoutMs`. */
async function setUp(approvalTimeoutMs: number) {
  Operator.deployed = [];
  const queue = new MemoryQueue({ channel: true });
  const store = new InMemorySessionStore();
  const entries = { operate: [operator, "work"] } as const;
  const app = createServer({ entries, store, queue, mintRootBudget: true, onInternalError: () => undefined });
  const worker = await startBackgroundWorker({ entries, store, queue, approvalTimeoutMs, onInternalError: () => undefined });
  const accepted = await app.request("/v1/agent/run", { method: "POST", headers: { "content-type": "application/json", prefer: "respond-async" }, body: JSON.stringify({ entry: "operate", task: "ship it" }) });
  expect(accepted.status).toBe(202);
  const { runId } = (await accepted.json()) as { runId: string };
  const log = () => queue.channel!.logs.get(runId) ?? [];
  /** Polls the run's log until `found` (the test's timeout bounds it). */
  const until = async (found: () => boolean) => {
    while (!found()) await new Promise((resolve) => setTimeout(resolve, 10));
  };
  const holding = () => log().some(({ event }) => event.type === "tool-call" && event["name"] === "hold");
  const asked = async () => {
    await until(() => log().some(({ event }) => event.type === "approval-request"));
    return String(log().find(({ event }) => event.type === "approval-request")!.event["toolCallId"]);
  };
  const answer = (toolCallId: string, approve: boolean) =>
    app.request(`/v1/runs/${runId}/approvals/${toolCallId}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ approve }) });
  const finish = async () => {
    await app.request(`/v1/runs/${runId}/cancel`, { method: "POST" });
    await Promise.all(queue.done);
    await worker.stop();
  };
  return { app, runId, until, holding, asked, answer, finish };
}

describe("answering a background run's tool call (POST /v1/runs/:id/approvals/:toolCallId)", () => {
  it("is a 409 once the worker denied the call on its timeout: the worker's denial is the recorded answer, and the tool never runs", async () => {
    const run = await setUp(30);
    const toolCallId = await run.asked();
    // The call times out, is denied, and the run goes on to `hold`.
    await run.until(run.holding);
    const late = await run.answer(toolCallId, true);
    const body = (await late.json()) as { error: { type: string; message: string } };
    await run.finish();
    expect(late.status).toBe(409);
    expect(body.error.type).toBe("run_conflict");
    expect(body.error.message).toContain("timed out, denied");
    expect(Operator.deployed).toEqual([]);
  });

  it("an answer recorded before the timeout stands: 200, the tool runs, and a second answer is a 409", async () => {
    const run = await setUp(60_000);
    const toolCallId = await run.asked();
    const first = await run.answer(toolCallId, true);
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ toolCallId, approved: true });
    await run.until(run.holding);
    expect(Operator.deployed).toEqual(["api"]);
    expect((await run.answer(toolCallId, false)).status).toBe(409);
    await run.finish();
  });

  it("is a 409 once the run was cancelled: its waiting call was denied", async () => {
    const run = await setUp(60_000);
    const toolCallId = await run.asked();
    await run.app.request(`/v1/runs/${run.runId}/cancel`, { method: "POST" });
    const late = await run.answer(toolCallId, true);
    expect(late.status).toBe(409);
    expect(((await late.json()) as { error: { message: string } }).error.message).toMatch(/cancelled|ended/);
    await run.finish();
    expect(Operator.deployed).toEqual([]);
  });
});
