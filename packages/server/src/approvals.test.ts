import { InMemorySessionStore } from "rein";
import { createServer } from "./create-server";
import { InMemoryApiKeyStore } from "./auth";
import { deployments, inspectorEntries } from "./__fixtures__/inspector-agents";
import { sseReader } from "./__fixtures__/sse-reader";
import { withUnsignedPolicyHeaders } from "./__fixtures__/unsigned-headers";

withUnsignedPolicyHeaders();

type App = ReturnType<typeof createServer>;

function startStreamed(app: App, runId: string) {
  return app.request("/v1/agent/run", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", "x-run-id": runId },
    body: JSON.stringify({ entry: "ship", task: "ship it" }),
  });
}

function answer(app: App, runId: string, toolCallId: string, body: unknown) {
  return app.request(`/v1/runs/${runId}/approvals/${encodeURIComponent(toolCallId)}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("approvals over HTTP", () => {
  beforeEach(() => (deployments.length = 0));

  it("a requiresApproval call emits approval-request, is listed, and Approve runs the tool once; a second answer is 409", async () => {
    const app = createServer({ entries: inspectorEntries, store: new InMemorySessionStore(), mintRootBudget: true });
    const events = sseReader(await startStreamed(app, "run-approve-1"));
    const request = await events.next((event) => event.data["type"] === "approval-request");
    expect(request.data).toMatchObject({ toolName: "deploy", input: { service: "api" }, agent: "Deployer" });
    const toolCallId = request.data["toolCallId"] as string;
    expect(typeof toolCallId).toBe("string");

    const listed = (await (await app.request("/v1/runs/run-approve-1/approvals")).json()) as { approvals: unknown[] };
    expect(listed.approvals).toEqual([expect.objectContaining({ toolCallId, toolName: "deploy", input: { service: "api" } })]);
    expect(deployments).toEqual([]);

    const approved = await answer(app, "run-approve-1", toolCallId, { approve: true });
    expect(approved.status).toBe(200);
    expect(await approved.json()).toEqual({ runId: "run-approve-1", toolCallId, approved: true });
    const again = await answer(app, "run-approve-1", toolCallId, { approve: false });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: { type: "run_conflict" } });

    const finish = await events.next((event) => event.event === "run-finish");
    expect(finish.data).toMatchObject({ status: "completed" });
    expect(finish.data["result"]).toContain("deployed api");
    expect(deployments).toEqual(["api"]);
  });

  it("Deny refuses the call: the tool never runs and the model is told it was not approved", async () => {
    const app = createServer({ entries: inspectorEntries, store: new InMemorySessionStore(), mintRootBudget: true });
    const events = sseReader(await startStreamed(app, "run-deny-1"));
    const request = await events.next((event) => event.data["type"] === "approval-request");
    const denied = await answer(app, "run-deny-1", request.data["toolCallId"] as string, { approve: false });
    expect(denied.status).toBe(200);
    const finish = await events.next((event) => event.event === "run-finish");
    expect(finish.data).toMatchObject({ status: "completed" });
    expect(finish.data["result"]).toContain("requires approval and it was not approved");
    expect(deployments).toEqual([]);
  });

  it("an unanswered call is denied after approvalTimeoutMs; answering it then is 409", async () => {
    const app = createServer({ entries: inspectorEntries, store: new InMemorySessionStore(), mintRootBudget: true, approvalTimeoutMs: 20 });
    const events = sseReader(await startStreamed(app, "run-timeout-1"));
    const request = await events.next((event) => event.data["type"] === "approval-request");
    const result = await events.next((event) => event.data["type"] === "tool-result");
    expect(result.data).toMatchObject({ isError: true, toolCallId: request.data["toolCallId"] });
    expect((await answer(app, "run-timeout-1", request.data["toolCallId"] as string, { approve: true })).status).toBe(409);
    await events.next((event) => event.event === "run-finish");
    expect(deployments).toEqual([]);
  });

  it("bad answers are typed 4xx: unknown run or call 404, a body without a boolean approve 400", async () => {
    const app = createServer({ entries: inspectorEntries, store: new InMemorySessionStore(), mintRootBudget: true });
    expect((await answer(app, "no-such-run-1", "call", { approve: true })).status).toBe(404);
    expect((await app.request("/v1/runs/no-such-run-1/approvals")).status).toBe(404);
    const events = sseReader(await startStreamed(app, "run-bad-1"));
    const request = await events.next((event) => event.data["type"] === "approval-request");
    expect((await answer(app, "run-bad-1", "not-a-call", { approve: true })).status).toBe(404);
    for (const body of [{}, { approve: "yes" }, { approve: true, extra: 1 }, []]) {
      const response = await answer(app, "run-bad-1", request.data["toolCallId"] as string, body);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { type: "invalid_body" } });
    }
    await answer(app, "run-bad-1", request.data["toolCallId"] as string, { approve: false });
    await events.next((event) => event.event === "run-finish");
  });

  it("with auth, another key gets 404 on a run's approvals and never sees it on the runs feed; an admin may answer", async () => {
    const keys = new InMemoryApiKeyStore();
    const owner = (await keys.create({ name: "owner", scopes: ["run", "read"] })).key;
    const other = (await keys.create({ name: "other", scopes: ["run", "read"] })).key;
    const admin = (await keys.create({ name: "admin", scopes: ["admin"] })).key;
    const app = createServer({ entries: inspectorEntries, store: new InMemorySessionStore(), mintRootBudget: true, auth: { keys } });
    const as = (key: string) => ({ authorization: `Bearer ${key}`, "content-type": "application/json" });
    const otherFeed = sseReader(await app.request("/v1/runs/events", { headers: as(other) }));
    await otherFeed.next((event) => event.event === "snapshot");
    const events = sseReader(
      await app.request("/v1/agent/run", { method: "POST", headers: { ...as(owner), accept: "text/event-stream", "x-run-id": "run-owned-1" }, body: JSON.stringify({ entry: "ship", task: "x" }) }),
    );
    const request = await events.next((event) => event.data["type"] === "approval-request");
    const path = `/v1/runs/run-owned-1/approvals/${request.data["toolCallId"] as string}`;
    expect((await app.request("/v1/runs/run-owned-1/approvals", { headers: as(other) })).status).toBe(404);
    expect((await app.request(path, { method: "POST", headers: as(other), body: '{"approve":true}' })).status).toBe(404);
    expect((await app.request("/v1/runs/run-owned-1/approvals", { headers: as(owner) })).status).toBe(200);
    expect((await app.request(path, { method: "POST", headers: as(admin), body: '{"approve":true}' })).status).toBe(200);
    await events.next((event) => event.event === "run-finish");
    expect(deployments).toEqual(["api"]);
    // The other key's feed got nothing of that run: the next thing it sees is its own run.
    await app.request("/v1/agent/run", { method: "POST", headers: { ...as(other), "x-run-id": "run-other-1" }, body: JSON.stringify({ entry: "quick", task: "x" }) });
    const next = await otherFeed.next(() => true);
    expect(JSON.stringify(next.data)).toContain("run-other-1");
    expect(JSON.stringify(next.data)).not.toContain("run-owned-1");
    await otherFeed.close();
  });

  it("approvalTimeoutMs and inspector are checked at construction", () => {
    expect(() => createServer({ entries: inspectorEntries, approvalTimeoutMs: -1 })).toThrow(/approvalTimeoutMs must be a positive number/);
    expect(() => createServer({ entries: inspectorEntries, inspector: "yes" as never })).toThrow(/inspector must be a boolean/);
  });
});
