/**
 * N servers + M workers on one database (DESIGN 5.3, docs/background-runs.md):
 * 2 `rein serve` processes (one only queues: --no-worker; one executes too)
 * and 2 `rein worker` processes on one embedded PostgreSQL, 100 background
 * runs of a resumable two-step pipeline (scripted provider). One worker is
 * SIGKILLed with runs in their second step: each of those runs is retried
 * by the queue and continues as a resumable run in another process — its
 * finished first step is not executed again. Every run completes exactly
 * once, `GET /v1/runs` on either server lists all of them, and a cancel
 * sent to the server that executes nothing stops a run executing elsewhere.
 * No elapsed-time assertion: the test's timeout bounds every wait.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PgBossQueue } from "@rein/server";
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from "../../store-postgres/src/__fixtures__/embedded-postgres";
import { compileRein, type CompiledRein } from "./__fixtures__/compiled-rein";

jest.setTimeout(600_000);

const MODULE = join(__dirname, "__fixtures__", "cluster-jobs.ts");
// 100 runs keep every executor busy past the kill (each takes runs from both halves) and make the exactly-once
// check meaningful; 200 (until 2026-12-07) cost twice the CPU and proved nothing more.
const RUNS = 100;

/** `rein` built once (__fixtures__/compiled-rein.ts), started as a user's install starts it. */
let rein: CompiledRein | undefined;

let database: EmbeddedPostgresServer | undefined;
let dir: string;
let stepLog: string;
let queue: PgBossQueue | undefined;
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rein-cluster-"));
  stepLog = join(dir, "steps.log");
  rein = await compileRein();
  database = await startEmbeddedPostgres();
  // Created here first, so its settings hold for every process: a job active 10 s without an answer is taken
  // as lost (its worker killed) and retried at once; this process runs the expiry check every second.
  queue = new PgBossQueue({ connectionString: database.connectionString, expireInSeconds: 10, retryDelaySeconds: 0, retryLimit: 3, maintenanceIntervalSeconds: 1 });
  await queue.get(randomUUID());
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await queue?.stop();
  await database?.stop();
  rmSync(dir, { recursive: true, force: true });
  rein?.remove();
});

/** A `rein` process; resolves once its output says `ready` (with the output so far). */
async function start(args: string[], ready: RegExp, env: Record<string, string> = {}): Promise<{ child: ChildProcessWithoutNullStreams; match: RegExpMatchArray; exited: Promise<number | null> }> {
  const [node, ...reinArgs] = rein!.command;
  const child = spawn(node!, [...reinArgs, ...args], {
    cwd: dir,
    env: { ...process.env, ...rein!.env, REIN_TEST_STEP_LOG: stepLog, ...env },
  });
  children.push(child);
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const match = await new Promise<RegExpMatchArray>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const found = output.match(ready);
      if (found !== null) resolve(found);
    });
    void exited.then((code) => reject(new Error(`rein ${args[0]} exited (${code}) before it was ready: ${output}`)));
  });
  return { child, match, exited };
}

const serveArgs = (...more: string[]) => ["serve", MODULE, "--store", database!.connectionString, "--port", "0", "--mint-root-budget", ...more];
const workerArgs = (...more: string[]) => ["worker", MODULE, "--store", database!.connectionString, ...more];

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, init);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function queueRun(server: string, entry: string, args: unknown[]): Promise<string> {
  const { status, body } = await json(`${server}/v1/agent/run`, { method: "POST", headers: { prefer: "respond-async", "content-type": "application/json" }, body: JSON.stringify({ entry, args }) });
  expect(status).toBe(202);
  return body["runId"] as string;
}

/** Polls `GET /v1/runs/:id` until `done` accepts its state. */
async function until(server: string, runId: string, done: (state: string) => boolean): Promise<Record<string, unknown>> {
  for (;;) {
    const { body } = await json(`${server}/v1/runs/${runId}`);
    if (done(String(body["state"]))) return body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const steps = (): string[][] => (existsSync(stepLog) ? readFileSync(stepLog, "utf8").trim().split("\n").filter(Boolean).map((line) => line.split(" ")) : []);

it("2 servers + 2 workers on one database: 100 runs, a worker SIGKILLed mid-run, every run completes exactly once, cancel from any instance", async () => {
  const [serverA, doomed] = await Promise.all([
    start(serveArgs("--no-worker"), /on (http:\/\/127\.0\.0\.1:\d+)/),
    // Every run this worker takes hangs in its second step, its first step done.
    start(workerArgs("--concurrency", "2"), /rein worker: pipeline, nap/, { REIN_TEST_HANG_SECOND: "1" }),
  ]);
  const a = serverA.match[1]!;
  const tasks = Array.from({ length: RUNS }, (_, index) => `task-${index}`);
  const runIds = new Map<string, string>();
  // Half of the runs through server A, 20 requests at a time.
  for (let index = 0; index < RUNS / 2; index += 20) {
    const batch = tasks.slice(index, Math.min(index + 20, RUNS / 2));
    const ids = await Promise.all(batch.map((task) => queueRun(a, "pipeline", [task])));
    batch.forEach((task, offset) => runIds.set(task, ids[offset]!));
  }
  // The doomed worker holds two runs in their second step: kill it there.
  while (steps().filter(([, step]) => step === "hang").length < 2) await new Promise((resolve) => setTimeout(resolve, 100));
  doomed.child.kill("SIGKILL");
  await doomed.exited;
  const killedPid = String(doomed.child.pid);
  const hung = steps().filter(([, step]) => step === "hang").map(([task]) => task!);

  const [serverB] = await Promise.all([
    start(serveArgs("--concurrency", "2"), /on (http:\/\/127\.0\.0\.1:\d+)/),
    start(workerArgs("--concurrency", "2"), /rein worker: pipeline, nap/),
  ]);
  const b = serverB.match[1]!;
  for (let index = RUNS / 2; index < RUNS; index += 20) {
    const batch = tasks.slice(index, index + 20);
    const ids = await Promise.all(batch.map((task) => queueRun(b, "pipeline", [task])));
    batch.forEach((task, offset) => runIds.set(task, ids[offset]!));
  }

  // A run executing in a worker or in server B is cancelled through server A (which executes nothing).
  const napId = await queueRun(b, "nap", []);
  await until(a, napId, (state) => state === "running");
  const cancelAt = Date.now();
  expect((await json(`${a}/v1/runs/${napId}/cancel`, { method: "POST" })).body).toEqual({ runId: napId, status: "cancelling" });
  // On a loaded machine the job may expire (10 s here) before the cancel ends it: the queue then retries it, and the
  // retry reads the recorded cancel before it runs anything, so the run still ends cancelled (never completed).
  expect(await until(b, napId, (state) => state !== "running" && state !== "interrupted")).toMatchObject({ state: "cancelled" });
  process.stdout.write(`cluster.test: a cancel through server A was seen cancelled from server B after ${Date.now() - cancelAt} ms\n`);

  // Every run completes, read from either server.
  for (const [index, task] of tasks.entries()) {
    const done = await until(index % 2 === 0 ? a : b, runIds.get(task)!, (state) => state !== "queued" && state !== "running" && state !== "interrupted");
    expect(done).toMatchObject({ state: "completed", result: expect.stringMatching(new RegExp(`^${task}: answer \\d+, finished by \\d+$`)) });
  }
  // Exactly once: each run's first and second steps were executed once each, across all processes.
  const executed = steps();
  for (const task of tasks) {
    expect([task, executed.filter(([name, step]) => name === task && step === "first").length]).toEqual([task, 1]);
    expect([task, executed.filter(([name, step]) => name === task && step === "second").length]).toEqual([task, 1]);
  }
  // The killed worker's runs continued elsewhere: first step by it (not run again), second by another process.
  expect(hung.length).toBeGreaterThanOrEqual(2);
  for (const task of hung) {
    expect(executed.find(([name, step]) => name === task && step === "first")?.[2]).toBe(killedPid);
    expect(executed.find(([name, step]) => name === task && step === "second")?.[2]).not.toBe(killedPid);
  }
  // GET /v1/runs is cluster-wide: either server lists every run, completed.
  for (const server of [a, b]) {
    const { body } = await json(`${server}/v1/runs?state=completed`);
    expect((body["runs"] as unknown[]).length).toBe(RUNS);
  }
});
