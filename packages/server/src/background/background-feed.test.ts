/**
 * A background run this server queued is listed in its runs feed
 * (`GET /v1/runs/events`, which the Inspector shows): `queued`, then
 * running with the usage and pending approvals the worker's events carry,
 * then how it ended — read from the run's log in the run channel.
 */
import { Agent, InMemorySessionStore, Runtime, ScriptedProvider, type ModelRequest } from "rein";
import { createServer } from "../create-server";
import type { EntryInit } from "../entries";
import { MemoryQueue } from "../__fixtures__/memory-queue";
import { sseReader } from "../__fixtures__/sse-reader";
import { startBackgroundWorker } from "./background-worker";
import { checkQuietRuns, followQueued, MAX_FOLLOWED } from "./follow-queued";

class Shipper extends Agent {
  static methodOptions = { deploy: { tool: true, requiresApproval: true, description: "Deploy a service." } };
  deploy(service: string): string {
    return `deployed ${service}`;
  }
  async ship(task: string): Promise<string> {
    return this.ask(task);
  }
}

function shipper({ onEvent, approveToolCall }: EntryInit): Shipper {
  const provider = new ScriptedProvider(
    [
      (request: ModelRequest) =>
        request.messages.some((message) => message.content.some((block) => block.type === "tool_result")) ? { text: "shipped" } : { toolCalls: [{ name: "deploy", input: { service: "api" } }] },
    ],
    { whenExhausted: "repeat-last", recordRequests: false },
  );
  return new Shipper({ runtime: new Runtime({ provider, onEvent }), ...(approveToolCall === undefined ? {} : { approveToolCall }) });
}

type Summary = { runId: string; status: string; requests: number; approvals: { toolCallId: string; toolName: string }[] };

it("a queued run is listed queued, then running with its pending approval, then completed with its usage", async () => {
  const queue = new MemoryQueue({ channel: true });
  const store = new InMemorySessionStore();
  const entries = { ship: [shipper, "ship"] } as const;
  const app = createServer({ entries, store, queue, mintRootBudget: true, onInternalError: () => undefined });
  const feed = sseReader(await app.request("/v1/runs/events"));
  await feed.next((event) => event.event === "snapshot");
  const accepted = await app.request("/v1/agent/run", {
    method: "POST",
    headers: { "content-type": "application/json", prefer: "respond-async" },
    body: JSON.stringify({ entry: "ship", task: "ship it", sessionId: "deploys" }),
  });
  expect(accepted.status).toBe(202);
  const { runId } = (await accepted.json()) as { runId: string };
  const runOf = (event: { event: string; data: Record<string, unknown> }) => (event.event === "run" && (event.data["run"] as Summary).runId === runId ? (event.data["run"] as Summary) : undefined);
  const queued = await feed.next((event) => runOf(event) !== undefined);
  expect(queued.data["run"]).toMatchObject({ runId, entry: "ship", status: "queued", sessionId: "deploys", requests: 0, approvals: [] });

  const worker = await startBackgroundWorker({ entries, store, queue, approvalTimeoutMs: 60_000, onInternalError: () => undefined });
  try {
    const asking = await feed.next((event) => (runOf(event)?.approvals.length ?? 0) > 0);
    const waiting = asking.data["run"] as Summary;
    expect(waiting).toMatchObject({ status: "running", requests: 1, approvals: [{ toolName: "deploy", input: { service: "api" } }] });
    // The Inspector's Approve: the same route as for a run in a request.
    const answer = await app.request(`/v1/runs/${runId}/approvals/${waiting.approvals[0]!.toolCallId}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ approve: true }),
    });
    expect(answer.status).toBe(200);
    const ended = await feed.next((event) => ["completed", "error", "cancelled"].includes(runOf(event)?.status ?? ""));
    expect(ended.data["run"]).toMatchObject({ runId, status: "completed", requests: 2, approvals: [] });
    // A subscriber that connects later finds it among the recent runs.
    const later = sseReader(await app.request("/v1/runs/events"));
    const snapshot = await later.next((event) => event.event === "snapshot");
    expect(snapshot.data["runs"]).toEqual([expect.objectContaining({ runId, status: "completed" })]);
    await later.close();
  } finally {
    await feed.close();
    await Promise.all(queue.done);
    await worker.stop();
  }
});

it("a run whose job ended without a run-end in its log (out of retries) is ended in the feed as the queue has it, when its quiet log is looked up", async () => {
  const queue = new MemoryQueue({ channel: true });
  const app = createServer({ entries: { ship: [shipper, "ship"] }, store: new InMemorySessionStore(), queue, mintRootBudget: true, onInternalError: () => undefined });
  const feed = sseReader(await app.request("/v1/runs/events"));
  await feed.next((event) => event.event === "snapshot");
  try {
    const accepted = await app.request("/v1/agent/run", { method: "POST", headers: { "content-type": "application/json", prefer: "respond-async" }, body: JSON.stringify({ entry: "ship", task: "x" }) });
    const { runId } = (await accepted.json()) as { runId: string };
    const runOf = (event: { event: string; data: Record<string, unknown> }) => (event.event === "run" && (event.data["run"] as Summary).runId === runId ? (event.data["run"] as Summary) : undefined);
    await feed.next((event) => runOf(event)?.status === "queued");
    // Its workers died on every attempt: the queue has it as failed, and no worker wrote its run-end.
    const { job } = (await queue.get(runId))!;
    queue.records.set(runId, { job, state: "error", outcome: { status: "error", result: null, error: { type: "worker_error", name: "Error", message: "out of retries" } } });
    // Still queued until its quiet log is looked up in the queue.
    await checkQuietRuns(queue, 0);
    const ended = await feed.next((event) => runOf(event)?.status === "error");
    expect(ended.data["run"]).toMatchObject({ runId, status: "error", error: { name: "Error", message: "out of retries" } });
  } finally {
    await feed.close();
  }
});

it("a server follows at most 500 background runs at once: the next is not tracked; one that ends makes room", async () => {
  const queue = new MemoryQueue({ channel: true });
  let tracked = 0;
  const ends: (() => Promise<void>)[] = [];
  const track = () => (tracked++, { event: () => undefined, end: () => undefined });
  const follow = (runId: string) => followQueued({ channel: queue.channel!, queue, runId, track, report: () => undefined, closing: () => false });
  for (let index = 0; index < MAX_FOLLOWED; index++) {
    expect(follow(`run-${index}`)).toBe(true);
    ends.push(() => queue.channel!.append(`run-${index}`, [{ type: "run-end", status: "completed" }]));
  }
  expect(MAX_FOLLOWED).toBe(500);
  expect(follow("one-more")).toBe(false);
  expect(tracked).toBe(500);
  // A followed run's log ends: it is no longer followed, and there is room for one more.
  await ends[0]!();
  for (let turn = 0; turn < 100 && !follow("now-room"); turn++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(tracked).toBe(501);
  for (const end of ends.slice(1)) await end();
  await queue.channel!.append("now-room", [{ type: "run-end", status: "completed" }]);
});

it("runs followed for a server that is closing stop being followed at the next look-up, without ending in its feed", async () => {
  const queue = new MemoryQueue({ channel: true });
  let closing = false;
  const ended: string[] = [];
  const track = () => ({ event: () => undefined, end: (status: string) => void ended.push(status) });
  for (const runId of ["a", "b"]) expect(followQueued({ channel: queue.channel!, queue, runId, track, report: () => undefined, closing: () => closing })).toBe(true);
  closing = true;
  await checkQuietRuns(queue, 0);
  expect(ended).toEqual([]);
  // No longer followed: the cap counts them no more, and their logs wake nothing.
  expect([...queue.channel!.followers.values()].every((set) => set.size === 0)).toBe(true);
});
