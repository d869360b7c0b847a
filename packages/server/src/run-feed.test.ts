import { InMemorySessionStore } from "rein";
import { createServer } from "./create-server";
import { inspectorEntries, waitingProviders } from "./__fixtures__/inspector-agents";
import { entries } from "./__fixtures__/agents";
import { sseReader } from "./__fixtures__/sse-reader";
import { withUnsignedPolicyHeaders } from "./__fixtures__/unsigned-headers";

withUnsignedPolicyHeaders();

const run = (app: ReturnType<typeof createServer>, body: object, runId: string) =>
  app.request("/v1/agent/run", { method: "POST", headers: { "content-type": "application/json", "x-run-id": runId }, body: JSON.stringify(body) });

describe("GET /v1/runs/events (the runs feed)", () => {
  it("sends a snapshot, then each run as it starts, its events, its usage and how it ended", async () => {
    const app = createServer({ entries, store: new InMemorySessionStore(), mintRootBudget: true });
    await run(app, { entry: "add", args: [1, 2] }, "run-before-1");
    const feed = sseReader(await app.request("/v1/runs/events"));
    const snapshot = await feed.next((event) => event.event === "snapshot");
    expect(snapshot.data["runs"]).toEqual([expect.objectContaining({ runId: "run-before-1", entry: "add", status: "completed" })]);

    const answered = run(app, { entry: "stream", task: "task-feed" }, "run-feed-1");
    const started = await feed.next((event) => event.event === "run" && (event.data["run"] as { runId: string }).runId === "run-feed-1");
    expect(started.data["run"]).toMatchObject({ entry: "stream", status: "running", sessionId: "run-run-feed-1", requests: 0 });
    const node = await feed.next((event) => event.event === "run-event" && (event.data["event"] as { type: string }).type === "node");
    expect(node.data).toMatchObject({ runId: "run-feed-1", event: { type: "node", role: expect.any(String) } });
    const ended = await feed.next((event) => event.event === "run" && (event.data["run"] as { status: string }).status !== "running");
    expect(ended.data["run"]).toMatchObject({ runId: "run-feed-1", status: "completed", requests: 1, inputTokens: 7, outputTokens: 3 });
    expect((await answered).status).toBe(200);
    await feed.close();
  });

  it("a cancelled run is reported cancelled, and its pending approvals are listed while it waits", async () => {
    const app = createServer({ entries: inspectorEntries, store: new InMemorySessionStore(), mintRootBudget: true });
    const feed = sseReader(await app.request("/v1/runs/events"));
    await feed.next((event) => event.event === "snapshot");
    const answered = run(app, { entry: "ship", task: "x" }, "run-ship-1");
    const waiting = await feed.next((event) => event.event === "run" && (event.data["run"] as { approvals: unknown[] }).approvals.length > 0);
    expect(waiting.data["run"]).toMatchObject({ runId: "run-ship-1", approvals: [{ toolName: "deploy", input: { service: "api" } }] });
    const before = waitingProviders.length;
    const stopped = run(app, { entry: "wait", task: "x" }, "run-wait-1");
    await feed.next((event) => event.event === "run" && (event.data["run"] as { runId: string }).runId === "run-wait-1");
    while (waitingProviders.length === before) await new Promise((resolve) => setTimeout(resolve, 10));
    await waitingProviders[before]!.started;
    expect((await app.request("/v1/runs/run-wait-1/cancel", { method: "POST" })).status).toBe(200);
    expect((await app.request("/v1/runs/run-ship-1/cancel", { method: "POST" })).status).toBe(200);
    const cancelled = await feed.next((event) => event.event === "run" && (event.data["run"] as { runId: string; status: string }).runId === "run-wait-1" && (event.data["run"] as { status: string }).status !== "running");
    expect(cancelled.data["run"]).toMatchObject({ status: "cancelled" });
    expect(await (await stopped).json()).toMatchObject({ status: "cancelled" });
    expect(await (await answered).json()).toMatchObject({ status: "cancelled" });
    await feed.close();
  });

  it("keeps every run in flight and the last 50 finished, in the order they started, however many finished before", async () => {
    const app = createServer({ entries: inspectorEntries, store: new InMemorySessionStore(), mintRootBudget: true });
    const watcher = sseReader(await app.request("/v1/runs/events"));
    await watcher.next((event) => event.event === "snapshot");
    // The oldest run waits for an approval all along: in flight, it is never forgotten.
    const waiting = run(app, { entry: "ship", task: "x" }, "run-oldest");
    await watcher.next((event) => event.event === "run" && (event.data["run"] as { approvals: unknown[] }).approvals.length > 0);
    for (let index = 1; index <= 55; index++) expect((await run(app, { entry: "quick", task: "x" }, `run-quick-${index}`)).status).toBe(200);
    const feed = sseReader(await app.request("/v1/runs/events"));
    const snapshot = await feed.next((event) => event.event === "snapshot");
    const ids = (snapshot.data["runs"] as { runId: string }[]).map((summary) => summary.runId);
    expect(ids).toEqual(["run-oldest", ...Array.from({ length: 50 }, (_, index) => `run-quick-${index + 6}`)]);
    expect((await app.request("/v1/runs/run-oldest/cancel", { method: "POST" })).status).toBe(200);
    expect(await (await waiting).json()).toMatchObject({ status: "cancelled" });
    await feed.close();
    await watcher.close();
  });
});
