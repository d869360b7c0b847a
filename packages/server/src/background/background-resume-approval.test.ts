/**
 * A retried background job whose earlier attempt left a resumable run
 * unfinished continues that run (finished steps not run again), and the
 * run's `requiresApproval` calls wait for an answer from any instance, as
 * on a first attempt: the job's approvals are the resumed agent's approver.
 */
import { Agent, Context, InMemorySessionStore, InterruptedError, Runtime, ScriptedProvider, step, type AgentOptions, type ModelRequest } from "rein";
import { createServer } from "../create-server";
import { MemoryQueue } from "../__fixtures__/memory-queue";
import { startBackgroundWorker } from "./background-worker";

/** Prepares (a saved step), then asks the model, which deploys (needs approval) and then answers. */
class Shipper extends Agent {
  static prepared = 0;
  static deployed: string[] = [];
  /** The first attempt stops after its first step, as a worker that was stopped does. */
  static stopFirst = true;
  static methodOptions = {
    ship: { resumable: true },
    deploy: { tool: true, requiresApproval: true, description: "Deploy a service." },
  };
  constructor(options: AgentOptions = {}) {
    const provider = new ScriptedProvider(
      [
        (request: ModelRequest) =>
          request.messages.some((message) => message.content.some((block) => block.type === "tool_result"))
            ? { text: "shipped" }
            : { toolCalls: [{ name: "deploy", input: { service: "api" } }] },
      ],
      { whenExhausted: "repeat-last", recordRequests: false },
    );
    super({ ...options, runtime: new Runtime({ provider }) });
  }
  deploy(service: string): string {
    Shipper.deployed.push(service);
    return `deployed ${service}`;
  }
  async ship(service: string): Promise<string> {
    await step("prepare", async () => (Shipper.prepared++, `ready ${service}`));
    if (Shipper.stopFirst) {
      Shipper.stopFirst = false;
      throw new InterruptedError("the worker stopped");
    }
    return this.ask(`ship ${service}`);
  }
}

it("a retried job's resumed run asks for approval of its requiresApproval call; an answer sent to the server lets it run, and the run completes", async () => {
  const queue = new MemoryQueue({ channel: true });
  const store = new InMemorySessionStore();
  const entries = { ship: [Shipper, "ship"] } as const;
  const app = createServer({ entries, store, queue, mintRootBudget: true, onInternalError: () => undefined });
  const accepted = await app.request("/v1/agent/run", {
    method: "POST",
    headers: { "content-type": "application/json", prefer: "respond-async" },
    body: JSON.stringify({ entry: "ship", args: ["api"], sessionId: "deploys" }),
  });
  expect(accepted.status).toBe(202);
  const { runId } = (await accepted.json()) as { runId: string };
  const { job } = (await queue.get(runId))!;

  // The earlier attempt: it ran the job's entry in the job's session, finished its first step and stopped; its log
  // recorded the resumable run's node opening, as the worker's recorder does.
  await expect(new Shipper({ context: Context.forSession(store, job.storedSessionId) }).ship("api")).rejects.toThrow("the worker stopped");
  const [left] = store.listRuns();
  expect(left).toMatchObject({ name: "Shipper.ship", state: "interrupted" });
  await queue.channel!.append(runId, [{ type: "node", phase: "start", role: "code", nodeId: left!.runId, name: "Shipper.ship" }]);

  // The retry.
  const worker = await startBackgroundWorker({ entries, store, queue, approvalTimeoutMs: 60_000, onInternalError: () => undefined });
  try {
    const log = () => queue.channel!.logs.get(runId) ?? [];
    // Polled, given up after 30 s (a run denied at once never asks: the test then fails instead of polling on).
    for (const giveUp = Date.now() + 30_000; !log().some(({ event }) => event.type === "approval-request") && Date.now() < giveUp; ) await new Promise((resolve) => setTimeout(resolve, 10));
    const asked = log().find(({ event }) => event.type === "approval-request")!.event;
    expect(asked).toMatchObject({ toolName: "deploy", input: { service: "api" } });
    expect(Shipper.deployed).toEqual([]);
    const answer = await app.request(`/v1/runs/${runId}/approvals/${String(asked["toolCallId"])}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ approve: true }),
    });
    expect(answer.status).toBe(200);
    await Promise.all(queue.done);
    expect((await queue.get(runId))!.outcome).toMatchObject({ status: "completed", result: "shipped" });
    expect(Shipper.deployed).toEqual(["api"]);
    // The saved step was not run again; the run completed on its original node.
    expect(Shipper.prepared).toBe(1);
    expect(store.listRuns()).toEqual([expect.objectContaining({ runId: left!.runId, state: "completed" })]);
  } finally {
    await worker.stop();
  }
});
