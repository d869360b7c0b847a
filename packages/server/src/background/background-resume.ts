import {
  withReachBudget,
  withRunListener,
  type Agent,
  type ReachBudget,
  type ReachPolicy,
  type RunEventListener,
  type RunRecord,
  type SessionStoreLike,
  type SpendReserver,
  type ToolApprover,
} from "rein";
import { entryClassFor, agentForRun } from "../resume-runs";
import { runsOf, storeReads } from "../store-reads";
import type { Entries } from "../entries";
import type { RunChannel } from "./run-channel";
import { whenAborted } from "../when-aborted";

/**
 * @internal The resumable run an earlier attempt of background run `runId`
 * started and did not finish, if any: its log records the run's code node
 * opening (`{ type: "node", phase: "start", role: "code" }` of a node the
 * store keeps as a run), and the run is still `running` or `interrupted` in
 * the job's session. A retried job continues that run instead of calling
 * the entry again.
 */
export async function unfinishedRunOf(channel: RunChannel, store: SessionStoreLike, runId: string, storedSessionId: string): Promise<RunRecord | undefined> {
  if (runsOf(store) === undefined) return undefined;
  const reads = storeReads(store);
  let after = 0;
  for (;;) {
    const events = await channel.read(runId, after, 1000);
    if (events.length === 0) return undefined;
    for (const { seq, event } of events) {
      after = seq;
      if (event.type !== "node" || event["phase"] !== "start" || event["role"] !== "code" || typeof event["nodeId"] !== "string") continue;
      const record = await reads.getRun(event["nodeId"]);
      if (record === undefined || record.sessionId !== storedSessionId) continue;
      // The outermost run of the attempt: a nested one continues with it.
      return record.state === "running" || record.state === "interrupted" ? record : undefined;
    }
  }
}

/**
 * @internal Continues `record` (a resumable run of an entry class) for a
 * retried background job: waits out the lease of the attempt that died
 * (the lease fences the two: a worker that is in fact alive keeps it, and
 * this attempt is then refused), then resumes it on its original node with
 * an agent of its entry class, under the job's budget, reporting to
 * `onEvent`, asking `approveToolCall` (the job's approvals, answered from
 * any instance) about its `requiresApproval` calls, and cancelled by `signal`. Finished steps return their saved
 * results without running again. `undefined` when no listed entry class
 * owns the run (the caller then calls the entry as on a first attempt).
 */
export function resumeForJob(
  options: {
    entries: Entries;
    store: SessionStoreLike;
    record: RunRecord;
    policy: ReachPolicy;
    budget: ReachBudget;
    traceparent?: string;
    signal: AbortSignal;
    onEvent: RunEventListener;
    spend?: SpendReserver;
    approveToolCall?: ToolApprover;
  },
): Promise<unknown> | undefined {
  const { store, record, policy, signal } = options;
  const entry = entryClassFor(options.entries, record.name);
  if (entry === undefined) return undefined;
  return (async () => {
    await leaseExpiry(store, record, signal);
    const agent: Agent = await agentForRun(entry, store, record, policy, options.approveToolCall);
    return withRunListener(
      options.onEvent,
      () => withReachBudget(options.budget, () => agent.resumeRun(record.runId), { policy, ...(options.traceparent === undefined ? {} : { traceparent: options.traceparent }) }),
      { signal, ...(options.spend === undefined ? {} : { spend: options.spend }) },
    );
  })();
}

/** Waits until the run's lease has expired (re-read: a live holder may renew it), or `signal` aborts. */
async function leaseExpiry(store: SessionStoreLike, record: RunRecord, signal: AbortSignal): Promise<void> {
  const reads = storeReads(store);
  let current: RunRecord | undefined = record;
  // At most about 5 minutes: a holder that keeps renewing is alive, and resumeRun then refuses the run.
  for (let round = 0; round < 60 && current !== undefined && current.owned && current.leaseUntil !== null && current.leaseUntil > Date.now() && !signal.aborted; round++) {
    const wait = Math.min(5_000, current.leaseUntil - Date.now() + 25);
    await new Promise<void>((resolve) => {
      // Each round stops listening when its wait ends: 60 rounds never pile 60 listeners on the run's signal.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stopListening = whenAborted(signal, () => (clearTimeout(timer), resolve()));
      if (!signal.aborted) timer = setTimeout(() => (stopListening(), resolve()), wait);
    });
    current = await reads.getRun(record.runId);
  }
}
