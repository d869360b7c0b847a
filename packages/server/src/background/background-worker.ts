import { InterruptedError, ReachError, ReachPolicy, RunNotResumableError, type ReachBudget, type RunEvent, type SessionStoreLike } from "rein";
import { checkEntries, type Entries } from "../entries";
import { CANCELLED, callEntry } from "../call-entry";
import { errorTypeOf, headOf } from "../run-outcome";
import { storedValue } from "./stored-json";
import type { BackgroundJob, BackgroundOutcome, BackgroundQueue } from "./background-queue";
import type { RunChannel } from "./run-channel";
import { budgetFromJob } from "./job-budget";
import { resumeForJob, unfinishedRunOf } from "./background-resume";
import { RunEventRecorder } from "./run-event-recorder";
import { approvalTimeoutOf, RunApprovals } from "../approvals";
import type { ApiKeyStore } from "../auth/api-key";
import { resumeKeyRun, type KeyRun } from "../auth/key-spend";
import { whenAborted } from "../when-aborted";

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
  /**
   * How long a tool call of a `requiresApproval` method (of an agent with no
   * `approveToolCall` of its own) waits for `POST
   * /v1/runs/:id/approvals/:toolCallId` on any instance before it is denied.
   * @default 300_000
   */
  readonly approvalTimeoutMs?: number;
  /**
   * The API keys of the servers that queue the runs (the same database:
   * `PostgresApiKeyStore`): a capped key's run reserves each model request
   * against the key's caps here and gives its run slot back when it ends. A
   * capped key's run taken by a worker without it ends in an error, unrun.
   */
  readonly keys?: ApiKeyStore;
  /** Receives a store fault behind a retried job. @default one line on stderr */
  readonly onInternalError?: (error: unknown) => void;
}

/**
 * A started worker: {@link BackgroundWorker.stop} stops taking jobs, ends
 * the runs executing here and closes the queue (which retries those runs).
 */
export interface BackgroundWorker {
  /**
   * Stops taking jobs and ends the runs executing here: each is interrupted
   * (its signal fires) and waited for (up to 30 s: code that ignores its
   * signal cannot be stopped), and its attempt fails, so the queue gives it
   * to another worker once the job expires (a resumable run continues from
   * its finished steps).
   */
  stop(): Promise<void>;
}

/** How long `stop()` waits for interrupted runs to end before it stops the queue anyway. */
const STOP_GRACE_MS = 30_000;

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
  const channel = queue.channel;
  const approvalTimeoutMs = approvalTimeoutOf(options.approvalTimeoutMs);
  /** The runs executing in this process: a cancel or an approval sent from any instance reaches its run here. */
  const executing = new Map<string, { controller: AbortController; approvals: RunApprovals }>();
  const stopControls = channel?.onControl((request) => {
    const run = executing.get(request.runId);
    if (run === undefined) return;
    if (request.action === "cancel") run.controller.abort(new Error(`run ${request.runId} cancelled by request`));
    else if (request.toolCallId !== undefined) run.approvals.answer(request.toolCallId, request.action === "approve");
  });
  /** Set by `stop()`: the reason every run executing here is aborted with. */
  let stopping: InterruptedError | undefined;
  const inFlight = new Set<Promise<unknown>>();
  const execute = (job: BackgroundJob): Promise<BackgroundOutcome> => {
    const running = executeJob(job);
    inFlight.add(running);
    void running.then(
      () => inFlight.delete(running),
      () => inFlight.delete(running),
    );
    return running;
  };
  const executeJob = async (job: BackgroundJob): Promise<BackgroundOutcome> => {
    const recorder = channel === undefined ? undefined : new RunEventRecorder(channel, job.runId, report);
    const controller = new AbortController();
    if (stopping !== undefined) controller.abort(stopping);
    // A requiresApproval call waits for an answer from any instance; its request is in the run's log (approval-request).
    // Its timeout is recorded as the call's answer (insert-once): an answer recorded first wins, a later one is a 409.
    const expire = channel === undefined ? undefined : (toolCallId: string) => void recordTimeout(channel, job.runId, toolCallId, report).then((approve) => approvals.answer(toolCallId, approve));
    const approvals = new RunApprovals(approvalTimeoutMs, (event) => recorder?.record(event), controller.signal, new Set(), expire);
    executing.set(job.runId, { controller, approvals });
    const key: { run?: KeyRun } = {};
    try {
      const outcome = await attempt(job, controller, approvals, recorder, key);
      // Interrupted by stop(): not the run's outcome. The attempt fails, and the queue retries it elsewhere.
      if (stopping !== undefined && controller.signal.reason === stopping) throw new Error(stopping.message);
      // The run is over: its key's slot is given back (a failed attempt keeps it for the retry).
      await key.run?.end().catch(report);
      // The log's last event: a follower of GET /v1/runs/:id/events ends its stream on it.
      recorder?.record({ type: "run-end", status: outcome.status, result: outcome.result, ...(outcome.error === undefined ? {} : { error: outcome.error }) });
      return outcome;
    } finally {
      approvals.close();
      executing.delete(job.runId);
      await recorder?.flush();
      channel?.release?.(job.runId);
    }
  };
  const attempt = async (job: BackgroundJob, controller: AbortController, approvals: RunApprovals, recorder: RunEventRecorder | undefined, key: { run?: KeyRun }): Promise<BackgroundOutcome> => {
    const entry = Object.prototype.hasOwnProperty.call(entries, job.entry) ? entries[job.entry] : undefined;
    if (entry === undefined) {
      if (job.keyId !== undefined && options.keys !== undefined) key.run = await resumeKeyRun(options.keys, job.keyId, job.runId).catch(() => undefined);
      return { status: "error", result: null, error: { type: "not_found", name: "Error", message: `no entry '${job.entry.slice(0, 64)}' in this worker's module; listed: ${Object.keys(entries).join(", ").slice(0, 400)}` } };
    }
    const usage = { inputTokens: 0, outputTokens: 0 };
    let observed = false;
    const onEvent = (event: RunEvent) => {
      observed = true;
      recorder?.record(event);
      approvals.observe(event);
      if (event.type === "model-response") {
        usage.inputTokens += event.usage.inputTokens;
        usage.outputTokens += event.usage.outputTokens;
      }
    };
    const base = async () => ({ ...(observed ? { usage: { ...usage } } : {}), ...(await headOf(store, job.storedSessionId)) });
    const budget: ReachBudget = budgetFromJob(job.budget);
    try {
      // A capped key's run: the slot the server took when it queued the run, and the key's caps as they are now.
      if (job.keyId !== undefined) {
        if (options.keys === undefined) throw new ReachError("spend cap: this run's API key has spend caps, and this worker has no key store to hold it to them: start the worker with the servers' keys (startBackgroundWorker({ keys }), rein worker opens them from --store)");
        key.run = await resumeKeyRun(options.keys, job.keyId, job.runId);
      }
      const spend = key.run?.spend === undefined ? {} : { spend: key.run.spend };
      // A cancel sent before this worker took the job (or while it was not listening) is recorded.
      if (channel !== undefined && (await channel.controlsOf(job.runId)).some((request) => request.action === "cancel")) {
        return { status: "cancelled", result: null, ...(await base()) };
      }
      const traceparent = job.traceparent === undefined ? {} : { traceparent: job.traceparent };
      // A retry of a run whose earlier attempt died: its resumable run continues, finished steps not run again.
      const unfinished = channel === undefined ? undefined : await unfinishedRunOf(channel, store, job.runId, job.storedSessionId);
      const resumed =
        unfinished === undefined
          ? undefined
          : resumeForJob({ entries, store, record: unfinished, policy, budget, ...traceparent, ...spend, signal: controller.signal, onEvent, approveToolCall: approvals.approver });
      const aborted = new Promise<typeof CANCELLED>((resolve) => whenAborted(controller.signal, () => resolve(CANCELLED)));
      const value = await (resumed === undefined
        ? callEntry({ entry, entryName: job.entry, args: job.args, store, storedSessionId: job.storedSessionId, runId: job.runId, budget, policy, ...traceparent, ...spend, signal: controller.signal, onEvent, approveToolCall: approvals.approver })
        : Promise.race([resumed, aborted]));
      if (value === CANCELLED || controller.signal.aborted) return { status: "cancelled", result: null, ...(await base()) };
      return { status: "completed", result: storedValue(value ?? null), ...(await base()) };
    } catch (error) {
      if (controller.signal.aborted) return { status: "cancelled", result: null, ...(await base()) };
      const err = error instanceof Error ? error : new Error(String(error));
      const type = errorTypeOf(err);
      if (type === "store_unavailable" || (RunNotResumableError.isInstance(err) && /running in another worker/.test(err.message))) {
        // Not the run's fault: fail the attempt, so the queue retries it (a live holder's lease is then over, or the store back).
        report(err);
        // pg-boss keeps the thrown error as the job's output, which GET /v1/runs/:id shows once out of retries:
        // never the store's own message (it names the database host).
        throw new Error(type === "store_unavailable" ? "the session store was unavailable for this attempt" : err.message);
      }
      return { status: "error", result: null, error: { type, name: err.name, message: err.message }, ...(await base()) };
    }
  };
  await queue.work(options.concurrency ?? 1, execute);
  return {
    stop: async () => {
      stopControls?.();
      stopping ??= new InterruptedError("the worker stopped before the run ended; the queue retries it");
      // No new job first: a run interrupted below would otherwise be taken up again here and failed at once.
      await queue.stopTaking?.().catch(report);
      for (const run of executing.values()) run.controller.abort(stopping);
      let waited: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([Promise.allSettled([...inFlight]), new Promise((done) => (waited = setTimeout(done, STOP_GRACE_MS)))]);
      clearTimeout(waited);
      await queue.stop();
    },
  };
}

/**
 * A waiting call of run `runId` timed out: its denial is recorded as the
 * call's answer, insert-once, so a late `POST /v1/runs/:id/approvals/:id`
 * is refused (409). When an answer was recorded first, that answer stands
 * (its control request also reaches this worker); a channel that fails
 * denies the call.
 */
async function recordTimeout(channel: RunChannel, runId: string, toolCallId: string, report: (error: unknown) => void): Promise<boolean> {
  try {
    if (await channel.control({ runId, action: "deny", toolCallId })) return false;
    return (await channel.controlsOf(runId)).some((request) => request.toolCallId === toolCallId && request.action === "approve");
  } catch (error) {
    report(error);
    return false;
  }
}
