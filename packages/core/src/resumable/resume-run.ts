import type { ScopeOwner } from "../scope/enter-scope";
import { awaitedLeases, isRunLeaseStore, type RunLeaseStore, type RunRecord, type RunState, type SessionStoreAsyncReads } from "@rein/session";
import { SessionNodeWriter } from "@rein/session";
import { SessionStoreClosedError } from "@rein/session";
import type { SessionStoreLike } from "@rein/session";
import { RunNotResumableError, RunPausedError } from "./resumable-errors";
import { codeChangePolicy as policies, type CodeChangePolicy } from "./resumable-options";
import type { LeftAloneReason, LeftAloneRun, ResumedRun, ResumeInterruptedOptions, ResumeInterruptedReport, ResumeRunOptions } from "./resume-types";

export type { LeftAloneReason, LeftAloneRun, ResumedRun, ResumeInterruptedOptions, ResumeInterruptedReport, ResumeRunOptions } from "./resume-types";
import { continueRun, DEFAULT_LEASE_MS, policyOf, resumableMethodOf } from "./resumable-run";
import { describeError } from "@rein/guard";
import { pendingApproval } from "./approval-wait";
import { activeRuns, SavedRun } from "./run-context";

/** Runs interrupted longer ago than this are left for `resumeRun`. */
const AUTOMATIC_WINDOW_MS = 2 * 60 * 60 * 1000;
/** Every state `resumeRun` may take a run from. */
const RESUMABLE_STATES: readonly RunState[] = ["running", "interrupted", "paused", "cancelled", "error"];
const INTERRUPTED_STATES: readonly RunState[] = ["running", "interrupted"];

/** Agents of classes with resumable methods, held weakly: who can continue a run of this process's stores. */
const agents = new Set<WeakRef<ScopeOwner>>();
/** Drops an agent's entry once it is collected: a server constructing one agent per request keeps the set small. */
const collected = new FinalizationRegistry<WeakRef<ScopeOwner>>((ref) => agents.delete(ref));

/** Called by the Agent constructor for classes with resumable methods. @internal */
export function registerResumableAgent(agent: ScopeOwner): void {
  const ref = new WeakRef(agent);
  agents.add(ref);
  collected.register(agent, ref);
}

/** Asks the runs of `agent` running now to pause before their next step. @internal */
export function pauseRunsOf(agent: object): void {
  for (const run of activeRuns.values()) if (run.owner === agent) run.pauseRequested = true;
}

function liveAgents(): ScopeOwner[] {
  const found: ScopeOwner[] = [];
  for (const ref of agents) {
    const agent = ref.deref();
    if (agent === undefined) agents.delete(ref);
    else found.push(agent);
  }
  return found;
}

function storeOf(agent: ScopeOwner): (SessionStoreLike & RunLeaseStore) | undefined {
  const store = agent.contextFor(undefined).store?.store;
  return store !== undefined && isRunLeaseStore(store) ? store : undefined;
}

/**
 * The store's reads, awaited: on its pool when it has one (`asyncReads`:
 * the Postgres store's `asyncWrites`), so a slow or stalled database holds
 * the resume, never the event loop; its synchronous methods on other
 * stores. Its lease calls likewise: `awaitedLeases` of @rein/session.
 */
function readsOf(store: SessionStoreLike): SessionStoreAsyncReads | SessionStoreLike {
  return store.asyncReads ?? store;
}

/** The run in `store`, or undefined; a store that cannot answer (closed by its owner) holds none. */
async function lookUp(store: SessionStoreLike & RunLeaseStore, runId: string): Promise<RunRecord | undefined> {
  try {
    return await awaitedLeases(store).getRun(runId);
  } catch (error) {
    if (SessionStoreClosedError.isInstance(error)) return undefined;
    throw error;
  }
}

function methodNameOf(record: RunRecord): [string, string] {
  const dot = record.name.lastIndexOf(".");
  return [record.name.slice(0, dot), record.name.slice(dot + 1)];
}

/** The run is one of the agent's resumable methods (defined by its class or inherited: the run names the defining class). */
function owns(agent: ScopeOwner, record: RunRecord): boolean {
  const [, methodName] = methodNameOf(record);
  return resumableMethodOf(agent, methodName)?.name === record.name;
}

function agentFor(store: SessionStoreLike, record: RunRecord): ScopeOwner | undefined {
  // Only agents of open stores are asked: storeOf is a comparison, no store call.
  return liveAgents().find((agent) => storeOf(agent) === store && owns(agent, record));
}

/**
 * Claims the run and reads what it saved; resolves with the call that
 * continues it on its original node (a synchronous method runs inside that
 * call). The claim is given back unchanged when the run's nodes cannot be read.
 */
async function claimForResume(
  agent: ScopeOwner,
  store: SessionStoreLike & RunLeaseStore,
  record: RunRecord,
  states: readonly RunState[],
  override: CodeChangePolicy | undefined,
): Promise<() => unknown> {
  const [, methodName] = methodNameOf(record);
  const method = resumableMethodOf(agent, methodName)!;
  if (activeRuns.has(record.runId)) throw new RunNotResumableError(record.runId, `run ${record.runId} (${record.name}) is already running in this process`);
  // Claimed from the epoch looked at, so this worker holds exactly the next one: its writes are fenced with it.
  const from = record.leaseEpoch;
  const epoch = from === undefined ? undefined : from + 1;
  const leases = awaitedLeases(store);
  if (!(await leases.claimRun(record.runId, states, method.options.leaseMs ?? DEFAULT_LEASE_MS, from))) {
    const now = await leases.getRun(record.runId);
    throw new RunNotResumableError(
      record.runId,
      now?.state === "completed"
        ? `run ${record.runId} (${record.name}) has completed: nothing to resume`
        : now !== undefined && !now.owned
          ? `run ${record.runId} (${record.name}) was taken by another worker while this one looked at it (it is ${now.state} now): resume it again`
          : `run ${record.runId} (${record.name}) is running in another worker (its lease holds until ${new Date(now?.leaseUntil ?? 0).toISOString()})`,
    );
  }
  // Another resume in this process may have started it while this one waited for the store: the claim just made is
  // given back as the run was, under its epoch (the run going on here holds the one before: its writes are fenced).
  if (activeRuns.has(record.runId)) {
    await leases.releaseRun(record.runId, record.state === "running" ? "interrupted" : record.state, record.reason, epoch);
    throw new RunNotResumableError(record.runId, `run ${record.runId} (${record.name}) is already running in this process`);
  }
  let saved: SavedRun;
  let writer: SessionNodeWriter;
  let node;
  try {
    // Read first: a session deleted since is not created again by opening its writer.
    const nodes = await readsOf(store).readAncestry(record.sessionId, record.runId, { turns: 1 });
    node = nodes.find((item) => item.id === record.runId);
    if (node === undefined) throw new RunNotResumableError(record.runId, `run ${record.runId} has no node in session ${record.sessionId}`);
    saved = new SavedRun(record.runId, nodes);
    writer = await SessionNodeWriter.open(store, record.sessionId);
    await writer.readAhead();
  } catch (error) {
    await leases.releaseRun(record.runId, record.state === "running" ? "interrupted" : record.state, record.reason, epoch);
    throw error;
  }
  const found = node;
  return () => continueRun(method, agent, agent, writer, store, found, saved, policyOf(method, override, agent), epoch);
}

function checkResumeArguments(runId: unknown, options: unknown): void {
  if (typeof runId !== "string" || runId.length === 0) throw new TypeError(`resumeRun(): runId must be a non-empty string, got ${JSON.stringify(runId)}`);
  if (typeof options !== "object" || options === null) throw new TypeError("resumeRun(): options must be an object");
  for (const [key, value] of Object.entries(options)) {
    if (key !== "codeChangePolicy") throw new TypeError(`resumeRun(): unknown option '${key}' (expected codeChangePolicy)`);
    if (value !== undefined && value !== policies.keepOriginal && value !== policies.useLatest) {
      throw new TypeError(`resumeRun(): codeChangePolicy must be "keep_original" or "use_latest", got ${JSON.stringify(value)}`);
    }
  }
}

/** `agent.resumeRun(runId, options)`: the run must be one of this agent's resumable methods, in its store. @internal */
export async function resumeRunOf(agent: ScopeOwner, runId: string, options: ResumeRunOptions = {}): Promise<unknown> {
  checkResumeArguments(runId, options);
  const store = storeOf(agent);
  const record = store === undefined ? undefined : await lookUp(store, runId);
  if (store === undefined || record === undefined) {
    throw new RunNotResumableError(runId, `no resumable run '${runId}' in the store of ${(agent as object).constructor.name} (${agent.contextFor(undefined).store?.store.location ?? "no store"})`);
  }
  if (!owns(agent, record)) throw new RunNotResumableError(runId, `run ${runId} belongs to ${record.name}, not to an agent of class ${(agent as object).constructor.name}`);
  return (await claimForResume(agent, store, record, RESUMABLE_STATES, options.codeChangePolicy))();
}

/**
 * Finishes a run on its original node — a run interrupted by a crash or a
 * restart, paused, or cancelled — and resolves with the method's result.
 * Finished steps return their saved results without running; the code
 * version is checked against the policy (`options.codeChangePolicy`
 * overrides the method's). A run that must stay paused (changed code the
 * policy refuses, removed, reordered or changed finished steps) rejects
 * with a {@link RunPausedError} naming the step or function, and its node
 * stays `paused`. The run is found in the stores of this process's agents
 * of the owning class (construct one first); a run another live worker
 * holds rejects with {@link RunNotResumableError}.
 *
 * @example
 * ```ts
 * const pipeline = new Pipeline({ context: Context.forSession(store, "jobs") });
 * const result = await resumeRun(runId, { codeChangePolicy: "use_latest" });
 * ```
 */
export async function resumeRun<T = unknown>(runId: string, options: ResumeRunOptions = {}): Promise<T> {
  checkResumeArguments(runId, options);
  const stores = new Set<SessionStoreLike & RunLeaseStore>();
  for (const agent of liveAgents()) {
    const store = storeOf(agent);
    if (store === undefined) continue;
    const record = await lookUp(store, runId);
    if (record === undefined) continue;
    stores.add(store);
    if (owns(agent, record)) return (await (await claimForResume(agent, store, record, RESUMABLE_STATES, options.codeChangePolicy))()) as T;
  }
  for (const store of stores) {
    const record = (await lookUp(store, runId))!;
    throw new RunNotResumableError(runId, `run ${runId} belongs to ${record.name}: construct an agent of that class on this store first`);
  }
  throw new RunNotResumableError(runId, `no resumable run '${runId}' in the stores of this process's agents`);
}

/**
 * Continues the runs of the store (or of every store this process's
 * resumable agents record to) that a restart or crash interrupted less than
 * 2 hours ago (`withinMs`), and reports those it left alone and why: a
 * paused run (explicit pause, incompatible code), a cancelled one, one
 * whose tool call was waiting for a person's approval, an
 * external step that started without a saved result ("check the
 * operation's result first"), one too old, one whose class has no agent
 * here, or one another live worker holds. Those wait for `resumeRun`.
 * Call it when a worker starts. With a shared store, several workers may
 * call it at once: each run is continued by exactly one (its lease).
 *
 * @example
 * ```ts
 * const pipeline = new Pipeline({ context: Context.forSession(store, "jobs") });
 * const { resumed, leftAlone } = await resumeInterrupted();
 * ```
 */
export async function resumeInterrupted(options: ResumeInterruptedOptions = {}): Promise<ResumeInterruptedReport> {
  if (typeof options !== "object" || options === null) throw new TypeError("resumeInterrupted(): options must be an object");
  for (const key of Object.keys(options)) {
    if (key !== "store" && key !== "withinMs") throw new TypeError(`resumeInterrupted(): unknown option '${key}' (expected store, withinMs)`);
  }
  const withinMs = options.withinMs ?? AUTOMATIC_WINDOW_MS;
  if (!(typeof withinMs === "number" && withinMs >= 0)) throw new TypeError("resumeInterrupted(): withinMs must be a non-negative number of milliseconds");
  const stores = new Set<SessionStoreLike & RunLeaseStore>();
  if (options.store !== undefined) {
    if (!isRunLeaseStore(options.store)) throw new TypeError(`resumeInterrupted(): the store (${options.store.location}) keeps no runs`);
    stores.add(options.store as SessionStoreLike & RunLeaseStore);
  } else {
    for (const agent of liveAgents()) {
      const store = storeOf(agent);
      if (store !== undefined) stores.add(store);
    }
  }
  const leftAlone: LeftAloneRun[] = [];
  const running: Promise<ResumedRun>[] = [];
  const now = Date.now();
  const considerRun = async (store: SessionStoreLike & RunLeaseStore, record: RunRecord): Promise<void> => {
    const { runId, name } = record;
    if (activeRuns.has(runId)) return;
    const leave = (reason: LeftAloneReason, message: string): void => void leftAlone.push({ runId, name, reason, message });
    if (record.state === "paused") {
      leave("paused", `${pauseMessage(record) ?? "paused"}; it waits for resumeRun("${runId}")`);
      return;
    }
    if (record.state === "cancelled") {
      leave("cancelled", `the run was cancelled; it waits for resumeRun("${runId}")`);
      return;
    }
    if (record.updatedAt < now - withinMs) {
      leave("too-old", `the run was last alive ${new Date(record.updatedAt).toISOString()}, more than ${withinMs} ms ago; it waits for resumeRun("${runId}")`);
      return;
    }
    const agent = agentFor(store, record);
    if (agent === undefined) {
      leave("no-agent", `no agent of the class of ${name} records to this store in this process`);
      return;
    }
    const nodes = await readsOf(store).readAncestry(record.sessionId, runId, { turns: 1 });
    const saved = new SavedRun(runId, nodes);
    const external = saved.unfinishedExternal();
    const approval = pendingApproval(nodes.find((node) => node.id === runId)?.metadata ?? {});
    if (external !== undefined || approval !== undefined) {
      const reason =
        external !== undefined
          ? {
              kind: "external" as const,
              step: String(external.metadata["step"]),
              message:
                `step "${String(external.metadata["step"])}" started an external operation whose result was not saved: ` +
                `check the operation's result first, then call resumeRun("${runId}")`,
            }
          : {
              kind: "approval" as const,
              step: approval!.toolName,
              message: `the run was waiting for a person's approval of a '${approval!.toolName}' call when it stopped: it asks again on resumeRun("${runId}")`,
            };
      if (!(await awaitedLeases(store).claimRun(runId, INTERRUPTED_STATES, DEFAULT_LEASE_MS, record.leaseEpoch))) {
        leave("running-elsewhere", `another live worker holds the run`);
        return;
      }
      const epoch = record.leaseEpoch === undefined ? undefined : record.leaseEpoch + 1;
      const fenced = epoch === undefined ? undefined : { fence: { runId, epoch } };
      try {
        const writer = await SessionNodeWriter.open(store, record.sessionId);
        await writer.readAhead();
        writer.update(runId, { metadata: { status: "paused", pause: reason, ...(approval === undefined ? {} : { awaitingApproval: null }) } }, fenced);
        await writer.flushAsync(fenced);
      } catch (error) {
        // The claim is given back as it was: the next look finds the run again.
        await awaitedLeases(store).releaseRun(runId, "interrupted", null, epoch);
        throw error;
      }
      await awaitedLeases(store).releaseRun(runId, "paused", JSON.stringify(reason), epoch);
      leave(reason.kind, reason.message);
      return;
    }
    let outcome: unknown;
    try {
      outcome = (await claimForResume(agent, store, record, INTERRUPTED_STATES, undefined))();
    } catch (error) {
      if (RunNotResumableError.isInstance(error)) {
        leave("running-elsewhere", error.message);
        return;
      }
      outcome = Promise.reject(error);
    }
    running.push(
      Promise.resolve(outcome).then(
        (result): ResumedRun => ({ runId, name, status: "completed", result }),
        (error: unknown): ResumedRun => ({ runId, name, status: RunPausedError.isInstance(error) ? "paused" : "error", error }),
      ),
    );
  };
  for (const store of stores) {
    let records: RunRecord[];
    try {
      records = await awaitedLeases(store).listRuns(["running", "interrupted", "paused", "cancelled"]);
    } catch (error) {
      // A store its owner closed holds nothing to continue.
      if (options.store === undefined && SessionStoreClosedError.isInstance(error)) continue;
      throw error;
    }
    for (const record of records) {
      // One run's store fault does not abandon the others (nor runs already started): it is reported for that run.
      try {
        await considerRun(store, record);
      } catch (error) {
        leftAlone.push({ runId: record.runId, name: record.name, reason: "error", message: `the store failed while looking at the run: ${describeError(error)}` });
      }
    }
  }
  return { resumed: await Promise.all(running), leftAlone };
}

function pauseMessage(record: RunRecord): string | undefined {
  if (record.reason === null) return undefined;
  try {
    const parsed = JSON.parse(record.reason) as { message?: unknown };
    return typeof parsed.message === "string" ? parsed.message : undefined;
  } catch {
    return undefined;
  }
}
