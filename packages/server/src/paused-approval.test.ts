import { Context, InMemorySessionStore, type TurnContinuation } from "rein";
import { createServer } from "./create-server";
import { deployments, inspectorEntries, PausingDeployer } from "./__fixtures__/inspector-agents";
import { sseReader } from "./__fixtures__/sse-reader";
import { withUnsignedPolicyHeaders } from "./__fixtures__/unsigned-headers";

withUnsignedPolicyHeaders();

type App = ReturnType<typeof createServer>;

interface PausedAnswer {
  status: string;
  sessionId: string;
  result: { status: string; continuation: TurnContinuation };
}

async function pausedRun(app: App, runId: string): Promise<PausedAnswer> {
  const response = await app.request("/v1/agent/run", {
    method: "POST",
    headers: { "content-type": "application/json", "x-run-id": runId },
    body: JSON.stringify({ entry: "pause", task: "Deploy api." }),
  });
  const body = (await response.json()) as PausedAnswer;
  expect(body.status).toBe("completed");
  expect(body.result.status).toBe("paused");
  return body;
}

function answer(app: App, runId: string, toolCallId: string, approve: boolean) {
  return app.request(`/v1/runs/${runId}/approvals/${encodeURIComponent(toolCallId)}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ approve }),
  });
}

describe("a served turn paused on an approval, answered over HTTP", () => {
  beforeEach(() => (deployments.length = 0));

  it("is listed and announced; Approve resumes it once (the tool runs once, the turn completes); a second answer is 409", async () => {
    const app = createServer({ entries: inspectorEntries, store: new InMemorySessionStore(), mintRootBudget: true });
    const feed = sseReader(await app.request("/v1/runs/events"));
    await feed.next((event) => event.event === "snapshot");
    const paused = await pausedRun(app, "run-paused-1");
    const { toolCallId, toolName, input } = paused.result.continuation.awaiting!;
    expect({ toolName, input }).toEqual({ toolName: "deploy", input: { service: "api" } });
    // The feed shows the run paused with the call waiting, and announces it.
    await feed.next((event) => event.event === "run-event" && (event.data["event"] as { type: string }).type === "approval-request");
    await feed.next((event) => event.event === "run" && JSON.stringify(event.data).includes('"status":"paused"') && JSON.stringify(event.data).includes(toolCallId));
    const listed = (await (await app.request("/v1/runs/run-paused-1/approvals")).json()) as { approvals: unknown[] };
    expect(listed.approvals).toEqual([expect.objectContaining({ toolCallId, toolName: "deploy", input: { service: "api" } })]);
    expect(deployments).toEqual([]);

    const approved = await answer(app, "run-paused-1", toolCallId, true);
    expect(approved.status).toBe(200);
    const body = (await approved.json()) as { runId: string; approved: boolean; resumed: { status: string; result: { status: string; text: string } } };
    expect(body).toMatchObject({ runId: "run-paused-1", toolCallId, approved: true, resumed: { status: "completed", result: { status: "completed" } } });
    expect(body.resumed.result.text).toContain("deployed api");
    expect(deployments).toEqual(["api"]);
    // The run is watched again while it resumes, and ends completed.
    await feed.next((event) => event.event === "run" && JSON.stringify(event.data).includes('"status":"completed"') && JSON.stringify(event.data).includes("run-paused-1"));

    const again = await answer(app, "run-paused-1", toolCallId, true);
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: { type: "run_conflict" } });
    expect(deployments).toEqual(["api"]);
    await feed.close();
  });

  it("Deny resumes it with a refusal: the tool never runs and the model is told it was not approved", async () => {
    const app = createServer({ entries: inspectorEntries, store: new InMemorySessionStore(), mintRootBudget: true });
    const paused = await pausedRun(app, "run-paused-2");
    const denied = await answer(app, "run-paused-2", paused.result.continuation.awaiting!.toolCallId, false);
    expect(denied.status).toBe(200);
    const body = (await denied.json()) as { approved: boolean; resumed: { status: string; result: { status: string; text: string } } };
    expect(body.approved).toBe(false);
    expect(body.resumed.result.status).toBe("completed");
    expect(body.resumed.result.text).toContain("was not approved");
    expect(deployments).toEqual([]);
  });

  it("a continuation the caller resumed itself is consumed: the answer on the route is 409 and the tool ran once", async () => {
    const store = new InMemorySessionStore();
    const app = createServer({ entries: inspectorEntries, store, mintRootBudget: true });
    const paused = await pausedRun(app, "run-paused-3");
    const { continuation } = paused.result;
    // The caller holds the continuation (plain JSON) and resumes it on the same store first.
    const own = await new PausingDeployer().resumeTurn(continuation, { approve: true, context: Context.forSession(store, continuation.sessionId!) });
    expect(own.status).toBe("completed");
    const late = await answer(app, "run-paused-3", continuation.awaiting!.toolCallId, true);
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({ error: { type: "run_conflict", message: expect.stringContaining(continuation.id!) } });
    expect(deployments).toEqual(["api"]);
  });

  it("unanswered for approvalTimeoutMs, the wait is dropped (nothing resumed, nothing runs); answering then is 409", async () => {
    const app = createServer({ entries: inspectorEntries, store: new InMemorySessionStore(), mintRootBudget: true, approvalTimeoutMs: 30 });
    const paused = await pausedRun(app, "run-paused-4");
    const toolCallId = paused.result.continuation.awaiting!.toolCallId;
    // Listed until it expires; then nothing of the run waits.
    while ((await app.request("/v1/runs/run-paused-4/approvals")).status === 200) await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await answer(app, "run-paused-4", toolCallId, true)).status).toBe(409);
    expect(deployments).toEqual([]);
  });
});
