import * as guard from "@rein/guard";
import { describeError, type Frame, InterruptedError } from "@rein/guard";
import type { Span } from "@opentelemetry/api";
import { Context } from "../context/context";
import { LeaseLostError, awaitedLeases, jsonProblem, keepLease } from "@rein/session";
import { isCancellation } from "../runtime/cancellation";
import type { RunEvents } from "../runtime/run-events";
import { currentScope, deriveScope, newNodeId, toolOnChain, toRecordable, type CallScope, type ScopedFunctionInfo } from "../scope/call-scope";
import { answerRefusal, enterAgent } from "../scope/agent-entry";
import { checkSameWriter, enterFunctionScope, topLevelPredecessor, type ScopeOwner } from "../scope/enter-scope";
import { isRunLeaseStore, type RunLeaseStore, type RunState } from "@rein/session";
import type { SessionNodeWriter } from "@rein/session";
import type { SessionNode } from "@rein/session";
import type { SessionCursor } from "../scope/session-cursor";
import { changedParts, codeFingerprint, type CodeFingerprint } from "./code-fingerprint";
import { RunPausedError, StepValueError } from "./resumable-errors";
import type { CodeChangePolicy, ResumableOptions } from "./resumable-options";
import { endSpanWith, withActiveSpan } from "../telemetry/tracing";
import { activeRuns, placeFrame, RunContext, Sequence, type SavedRun } from "./run-context";

const runInFrame = guard.runInFrame;

/** The lease of a running run, when `resumable.leaseMs` does not say. */
export const DEFAULT_LEASE_MS = 30_000;

/** What the class setup knows of one resumable method, kept on its wrapper. @internal */
export interface ResumableMethod {
  readonly frame: Frame;
  readonly info: ScopedFunctionInfo;
  /** `<durable class id>.<method>` (`agentClassId`): what runs are recorded and resumed under. */
  readonly name: string;
  readonly methodName: string;
  readonly original: (...args: unknown[]) => unknown;
  readonly options: ResumableOptions;
  /** Computed on first use: hashing sources costs nothing until a run starts. */
  fingerprint?: CodeFingerprint;
}

/** The code version a run adopted, as saved in its node's `metadata.resumable`. @internal */
export interface SavedVersion extends CodeFingerprint {
  /** Every fingerprint the run adopted, oldest first. */
  readonly history: readonly string[];
}

const RESUMABLE = Symbol.for("rein.resumableMethod");

/** The wrapper of a resumable method: enters a run instead of an ordinary scoped call. @internal */
export function resumableWrapper(method: ResumableMethod): (this: unknown, ...args: unknown[]) => unknown {
  const wrapper = function (this: unknown, ...args: unknown[]): unknown {
    const owner = this !== undefined && this !== null && typeof (this as ScopeOwner).contextFor === "function" ? (this as ScopeOwner) : undefined;
    return startRun(method, owner, this, args);
  };
  Object.defineProperty(wrapper, RESUMABLE, { value: method });
  return wrapper;
}

/** The resumable method behind `agent[name]`, if it is one. @internal */
export function resumableMethodOf(target: object, name: string): ResumableMethod | undefined {
  const fn = (target as Record<string, unknown>)[name] as { [RESUMABLE]?: ResumableMethod } | undefined;
  return typeof fn === "function" ? fn[RESUMABLE] : undefined;
}

/** The method's code version (cached). @internal */
export function fingerprintOf(method: ResumableMethod): CodeFingerprint {
  return (method.fingerprint ??= codeFingerprint(method.name, method.original as (...args: never[]) => unknown, method.options.helpers ?? []));
}

/**
 * A fresh run: the method's code node (its id is the run id) is written and
 * committed with the run's input and code version, the run is registered
 * with a lease in the store, and the method runs with `step()` recording
 * below it. Without a store to record to, it is an ordinary scoped call.
 */
function startRun(method: ResumableMethod, owner: ScopeOwner | undefined, thisArg: unknown, args: unknown[]): unknown {
  try {
    const parent = currentScope();
    const context = owner !== undefined ? owner.contextFor(parent?.context) : (parent?.context ?? new Context());
    const writer = context.store;
    if (writer === undefined || parent?.suppressed === writer || parent?.region?.closed === true) {
      return enterFunctionScope(method.frame, method.info, owner, method.original, thisArg, args);
    }
    checkSameWriter(parent, writer);
    const store = leaseStoreOf(writer, method.name);
    const problem = jsonProblem(args);
    if (problem !== undefined) throw new StepValueError(method.name, "input", problem[0], problem[1]);
    const version = fingerprintOf(method);
    const saved: SavedVersion = { ...version, history: [version.fingerprint] };
    const runId = newNodeId();
    const metadata = { status: "running", doc: method.info.doc, resumable: saved };
    const cursor = parent?.cursor;
    if (cursor !== undefined && cursor.writer === writer && (cursor.callId !== null || parent!.toolCall !== undefined)) {
      cursor.append({ id: runId, role: "code", name: method.name, input: args, metadata });
    } else {
      writer.append({ id: runId, role: "code", name: method.name, input: args, metadata, caller: null, predecessor: topLevelPredecessor(writer, context) });
    }
    // A registered run's lease has epoch 1: the run's writes are fenced with it.
    const start = (): unknown => runBody(method, new RunContext(runId, method.name, writer, store, thisArg, undefined, 1), owner, context, parent, thisArg, args);
    // The run's node is stored before the run is registered. An async method awaits both (on a store with an
    // asynchronous path, without blocking the event loop); a synchronous one commits and registers in place.
    if (method.info.isAsync && writer.store.commitAsync !== undefined) {
      const register = () => awaitedLeases(store).registerRun(runId, writer.sessionId, method.name, leaseOf(method));
      return writer.flushAsync().then(register).then(start);
    }
    writer.flush();
    store.registerRun(runId, writer.sessionId, method.name, leaseOf(method));
    return start();
  } catch (error) {
    if (method.info.isAsync) return Promise.reject(error);
    throw error;
  }
}

/**
 * Continues a run this process has claimed: checks the code version against
 * the policy (pausing when it refuses), reopens the run's node and runs the
 * method again with its saved input, finished steps answering from their
 * saved results. `epoch`: the lease epoch the claim took (undefined from a
 * store that keeps none), which fences the run's writes. @internal
 */
export function continueRun(
  method: ResumableMethod,
  owner: ScopeOwner,
  thisArg: unknown,
  writer: SessionNodeWriter,
  store: RunLeaseStore,
  node: SessionNode,
  saved: SavedRun,
  policy: CodeChangePolicy,
  epoch?: number,
): unknown {
  const runId = node.id;
  const run = new RunContext(runId, method.name, writer, store, thisArg, saved, epoch);
  const args = Array.isArray(node.input) ? (node.input as unknown[]) : [];
  const version = node.metadata["resumable"] as SavedVersion | undefined;
  const current = fingerprintOf(method);
  let adopted: SavedVersion = version ?? { ...current, history: [current.fingerprint] };
  if (version !== undefined && version.fingerprint !== current.fingerprint) {
    if (policy === "keep_original") {
      const changed = changedParts(version, current);
      const error = run.pause(
        "code-changed",
        `the code changed since the run's version ${version.fingerprint} (${changed.join(", ")} changed); with codeChangePolicy "keep_original" ` +
          `it continues only where that version is loaded: deploy it again, or resume with { codeChangePolicy: "use_latest" }`,
        changed[0],
      );
      pauseNode(run, error);
      throw error;
    }
    adopted = { ...current, history: [...version.history, current.fingerprint] };
  }
  run.update(runId, { metadata: { status: "running", error: undefined, pause: undefined, resumable: adopted } });
  const context = contextOn(owner, writer);
  // The resume's caller scope passes on what a call inherits: its reach budget, cancellation signal, run listeners and trace.
  const parent = currentScope();
  const saving = method.info.isAsync ? run.save() : run.flush();
  if (saving !== undefined) return saving.then(() => runBody(method, run, owner, context, parent, thisArg, args));
  return runBody(method, run, owner, context, parent, thisArg, args);
}

/** The Context a resumed run binds: the owner's when it records to the run's session, else one bound to that session. */
function contextOn(owner: ScopeOwner, writer: SessionNodeWriter): Context {
  const own = owner.contextFor(undefined);
  return own.store === writer ? own : Context.forSession(writer, writer.sessionId);
}

function leaseStoreOf(writer: SessionNodeWriter, name: string): RunLeaseStore {
  const store = writer.store;
  if (!isRunLeaseStore(store)) {
    throw new TypeError(
      `${name} is resumable, but its store (${store.location}) keeps no runs: use SessionStore, InMemorySessionStore or PostgresSessionStore, ` +
        `or implement RunLeaseStore`,
    );
  }
  return store;
}

function leaseOf(method: ResumableMethod): number {
  return method.options.leaseMs ?? DEFAULT_LEASE_MS;
}

/** The policy of a resume: its override, else the method's, else the agent's `execution`, else keep_original. @internal */
export function policyOf(method: ResumableMethod, override: CodeChangePolicy | undefined, owner: object): CodeChangePolicy {
  return override ?? method.options.codeChangePolicy ?? (owner as { executionPolicy?: CodeChangePolicy }).executionPolicy ?? "keep_original";
}

function runBody(
  method: ResumableMethod,
  run: RunContext,
  owner: ScopeOwner | undefined,
  context: Context,
  parent: CallScope | undefined,
  thisArg: unknown,
  args: unknown[],
): unknown {
  const sequence = new Sequence(run, run.runId);
  const events = owner?.eventsFor === undefined ? parent?.events : owner.eventsFor(parent?.events);
  // An Agent entry counts one level of logic depth, is checked against reach and opens its span, as an ordinary method's does.
  const entered = enterAgent(parent, owner, method.info, events, run.writer.sessionId, run.runId);
  const span = entered.span;
  const scope = deriveScope(parent);
  scope.trace = entered.trace;
  scope.reach = entered.reach;
  scope.agentDepth = entered.agentDepth;
  scope.agent = entered.agent;
  scope.context = context;
  scope.events = events;
  scope.fn = method.info;
  scope.tool = toolOnChain(parent, entered.agent, method.info);
  scope.writer = run.writer;
  scope.cursor = sequence.cursor as SessionCursor;
  const listening = events?.listening === true ? events : undefined;
  listening?.emit({ type: "node", phase: "start", nodeId: run.runId, role: "code", name: run.name });
  const renewal = keepLease(run, leaseOf(method));
  activeRuns.set(run.runId, run);
  const limits = owner?.scopeLimits;
  let result: unknown;
  try {
    // Refused by reach: the agent's fallback answers (the run completes with it, marked degraded), else the refusal ends the run.
    if (entered.refusal !== undefined) result = answerRefusal(owner, method.info, args, entered.refusal);
    else {
      const frame = placeFrame(method.frame, { run, sequence });
      const enter = () => runInFrame(frame, enterRun, limits === undefined ? { data: scope } : { ...limits, data: scope }, method.original, thisArg, args);
      result = span === undefined ? enter() : withActiveSpan(span, enter);
    }
  } catch (error) {
    return traceEnd(span, () => endRun(run, sequence, renewal, undefined, error, true, scope, listening, false));
  }
  if (result instanceof Promise) {
    return traceEnd(span, () =>
      (result as Promise<unknown>).then(
        (value: unknown) => endRun(run, sequence, renewal, value, undefined, false, scope, listening, true),
        (error: unknown) => endRun(run, sequence, renewal, undefined, error, true, scope, listening, true),
      ),
    );
  }
  return traceEnd(span, () => endRun(run, sequence, renewal, result, undefined, false, scope, listening, false));
}

/** Ends the run's span (when it has one) once `finish` settles: ERROR when the run failed or paused. */
function traceEnd<R>(span: Span | undefined, finish: () => R): R {
  return span === undefined ? finish() : endSpanWith(span, finish);
}

function enterRun(original: (...args: unknown[]) => unknown, thisArg: unknown, args: unknown[]): unknown {
  return Reflect.apply(original, thisArg, args);
}

/**
 * Ends one attempt: `completed` with the method's value, or — the method
 * failed, or finished steps were never called again — `paused`,
 * `interrupted`, `cancelled` or `error`; the node is committed and the
 * lease released with the run's new state.
 */
function endRun(
  run: RunContext,
  sequence: Sequence,
  renewal: () => void,
  value: unknown,
  error: unknown,
  failed: boolean,
  scope: CallScope,
  events: RunEvents | undefined,
  isAsync: boolean,
): unknown {
  renewal();
  activeRuns.delete(run.runId);
  if (run.leaseLost) throw leaseLost(run, error, events);
  if (!failed) {
    const missing = sequence.missingFinished();
    if (missing !== undefined) {
      failed = true;
      error = run.pause(
        "incompatible",
        `finished step "${missing.name}" is no longer called: removed steps cannot resume (the run's result was not recorded)`,
        missing.name,
      );
    }
  }
  const { runId } = run;
  // Every write below is under the run's lease (run.update, the save point, run.release): refused once another worker claimed the run.
  let state: RunState = "completed";
  let reason: string | null = null;
  try {
    if (!failed) {
      try {
        run.update(runId, { output: value, metadata: { status: "completed" } });
      } catch (failure) {
        if (!(failure instanceof TypeError)) throw failure;
        run.update(runId, { output: toRecordable(value), metadata: { status: "completed" } });
      }
    } else if (RunPausedError.isInstance(error)) {
      state = "paused";
      reason = markPaused(run, error);
    } else {
      state =
        InterruptedError.isInstance(error) || InterruptedError.isInstance(scope.signal?.reason)
          ? "interrupted"
          : isCancellation(error) || scope.signal?.aborted === true
            ? "cancelled"
            : "error";
      run.update(runId, { metadata: { status: state, error: describeError(error) } });
      reason = JSON.stringify({ kind: state, message: describeError(error) });
    }
  } catch (failure) {
    throw closingRefused(run, failure, events);
  }
  const ended = state;
  return saveThenRelease(run, isAsync, state, reason, events, () => {
    events?.emit({ type: "node", phase: "end", nodeId: runId, role: "code", name: run.name, status: ended });
    if (failed) throw error;
    return value;
  });
}

/**
 * The run's closing save point, then its lease released with its new state,
 * then `ended`. An async run awaits the save (on a store with an
 * asynchronous path, without blocking the event loop); a synchronous run
 * commits in place.
 */
function saveThenRelease(run: RunContext, isAsync: boolean, state: RunState, reason: string | null, events: RunEvents | undefined, ended: () => unknown): unknown {
  const refused = (failure: unknown): never => {
    throw closingRefused(run, failure, events);
  };
  const release = (): unknown => {
    let releasing: Promise<void> | undefined;
    try {
      releasing = run.release(state, reason, isAsync);
    } catch (failure) {
      refused(failure);
    }
    return releasing === undefined ? ended() : releasing.then(ended, refused);
  };
  let saving: Promise<void> | undefined;
  try {
    if (isAsync) saving = run.save();
    else run.flush();
  } catch (failure) {
    throw closingRefused(run, failure, events);
  }
  if (saving === undefined) return release();
  return saving.then(release, (failure: unknown) => {
    throw closingRefused(run, failure, events);
  });
}

/** A closing write the store refused under the run's lease: the same outcome as a loss found before; anything else as it is. */
function closingRefused(run: RunContext, failure: unknown, events: RunEvents | undefined): unknown {
  return run.leaseLost ? leaseLost(run, failure, events) : failure;
}

/**
 * The outcome of an attempt that lost its lease, however the loss was found
 * (a refused renewal, or a write the store refused: that LeaseLostError is
 * kept as the cause). Another worker owns the run now: this attempt writes
 * nothing more (its node, its state are the other's).
 */
function leaseLost(run: RunContext, error: unknown, events: RunEvents | undefined): RunPausedError {
  events?.emit({ type: "node", phase: "end", nodeId: run.runId, role: "code", name: run.name, status: "paused" });
  const refused = LeaseLostError.isInstance(error) && error.runId === run.runId ? error : undefined;
  return run.pause(
    "lease-lost",
    `this worker lost the lease of run ${run.runId} (another worker may be running it): it stopped without recording its result` +
      (refused === undefined ? "" : ` (the store refused its write under lease epoch ${refused.heldEpoch}; the run is at epoch ${refused.currentEpoch})`),
    undefined,
    refused,
  );
}

/** Leaves the run's node `paused` with the reason, and the run paused in its store. */
function pauseNode(run: RunContext, error: RunPausedError): void {
  const reason = markPaused(run, error);
  run.flush();
  run.release("paused", reason);
}

/** Writes the pause's reason on the run's node; returns it as the lease's release reason. */
function markPaused(run: RunContext, error: RunPausedError): string {
  const reason = { kind: error.kind, message: error.message, ...(error.step === undefined ? {} : { step: error.step }) };
  run.update(run.runId, { metadata: { status: "paused", pause: reason } });
  return JSON.stringify(reason);
}
