import { ReachPolicy, type ReachBudget, type RunEvent, type SessionStoreLike } from "rein";
import { checkEntries, type Entries } from "../entries";
import { CANCELLED, callEntry } from "../call-entry";
import { errorTypeOf, headOf } from "../create-server";
import { safeJson } from "../safe-json";
import type { BackgroundJob, BackgroundOutcome, BackgroundQueue } from "./background-queue";
import { budgetFromJob } from "./job-budget";

/**
 * Options of {@link startBackgroundWorker}.
 * @example
 * ```ts
 * await startBackgroundWorker({ entries, store, queue: new PgBossQueue({ connectionString: url }), concurrency: 4 });
 * ```
 */
export interface BackgroundWorkerOptions {
  /** The entries a job may name (the module's `entries`, as `rein serve` lists them). */
  readonly entries: Entries;
  /** Where runs are recorded: the store the accepting server reads (a shared database). */
  readonly store: SessionStoreLike;
  /** The queue the server puts runs on. */
  readonly queue: BackgroundQueue;
  /** The local policy each job's budget is clamped to again. @default new ReachPolicy() */
  readonly reach?: ReachPolicy;
  /** Runs executed at once by this process. @default 1 */
  readonly concurrency?: number;
  /** Receives a store fault behind a retried job. @default one line on stderr */
  readonly onInternalError?: (error: unknown) => void;
}

/**
 * A started worker: {@link BackgroundWorker.stop} stops taking jobs and
 * closes the queue (runs still executing are left to the queue's retry).
 */
export interface BackgroundWorker {
  stop(): Promise<void>;
}

/**
 * Executes the background runs of `queue` (`POST /v1/agent/run` with
 * `Prefer: respond-async`) in this process: each job's entry is called
 * exactly as the server calls it in a request (same code, `callEntry`),
 * recording into the job's session under the caller's ownership, inside the
 * budget the server admitted, and its outcome (result, or error, and usage)
 * is recorded as the job's result, readable at `GET /v1/runs/:id` from any
 * instance. A run error is an outcome, not a failed job; a store fault fails
 * the attempt, so the queue retries it. `rein worker` runs this.
 * @example
 * ```ts
 * const worker = await startBackgroundWorker({ entries, store, queue });
 * process.once("SIGTERM", () => void worker.stop());
 * ```
 */
export async function startBackgroundWorker(options: BackgroundWorkerOptions): Promise<BackgroundWorker> {
  checkEntries(options.entries);
  const { entries, store, queue } = options;
  const policy = options.reach ?? new ReachPolicy();
  const report = options.onInternalError ?? ((error: unknown) => process.stderr.write(`rein worker: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}\n`));
  const execute = async (job: BackgroundJob): Promise<BackgroundOutcome> => {
    const entry = Object.prototype.hasOwnProperty.call(entries, job.entry) ? entries[job.entry] : undefined;
    if (entry === undefined) {
      return { status: "error", result: null, error: { type: "not_found", name: "Error", message: `no entry '${job.entry.slice(0, 64)}' in this worker's module; listed: ${Object.keys(entries).join(", ").slice(0, 400)}` } };
    }
    const usage = { inputTokens: 0, outputTokens: 0 };
    let observed = false;
    const onEvent = (event: RunEvent) => {
      observed = true;
      if (event.type === "model-response") {
        usage.inputTokens += event.usage.inputTokens;
        usage.outputTokens += event.usage.outputTokens;
      }
    };
    const base = () => ({ ...(observed ? { usage: { ...usage } } : {}), ...headOf(store, job.storedSessionId) });
    const budget: ReachBudget = budgetFromJob(job.budget);
    try {
      const value = await callEntry({
        entry,
        entryName: job.entry,
        args: job.args,
        store,
        storedSessionId: job.storedSessionId,
        runId: job.runId,
        budget,
        policy,
        ...(job.traceparent === undefined ? {} : { traceparent: job.traceparent }),
        signal: new AbortController().signal,
        onEvent,
      });
      if (value === CANCELLED) return { status: "cancelled", result: null, ...base() };
      return { status: "completed", result: JSON.parse(safeJson(value ?? null)) as unknown, ...base() };
    } catch (error) {
      const err = error instanceof Error ? error : new Error(String(error));
      const type = errorTypeOf(err);
      if (type === "store_unavailable") {
        // Not the run's fault: fail the attempt, so the queue retries it.
        report(err);
        throw err;
      }
      return { status: "error", result: null, error: { type, name: err.name, message: err.message }, ...base() };
    }
  };
  await queue.work(options.concurrency ?? 1, execute);
  return { stop: () => queue.stop() };
}
