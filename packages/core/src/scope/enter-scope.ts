import * as guard from "@rein/guard";
import { describeError, type Frame, type ReachError, ContextHeadError, ContextStoreError, InterruptedError } from "@rein/guard";
import { Context } from "../context/context";
import { isCancellation } from "../runtime/cancellation";
import type { RunEvents } from "../runtime/run-events";
import type { SessionNodeWriter } from "@rein/session";
import type { SessionNodeStatus } from "@rein/session";
import { currentScope, deriveScope, newNodeId, toolOnChain, toRecordable, type CallScope, type ScopedFunctionInfo } from "./call-scope";
import { SessionCursor } from "./session-cursor";
import { preInvocationHooks, type InvocationInfo } from "./hooks";
import type { Span } from "@opentelemetry/api";
import { answerRefusal, enterAgent } from "./agent-entry";
import type { ScopeOwner } from "./scope-owner";
import { endSpanWith, failSpan, withActiveSpan } from "../telemetry/tracing";

// Held in a const: the package's re-exported binding is a getter, and this is the hot path.
const runInFrame = guard.runInFrame;

export type { ScopeOwner } from "./scope-owner";

/**
 * Runs `target.apply(thisArg, args)` as a scoped call: a guard frame (the
 * recursion ceiling, cycle detection and chain depth are checked on entry),
 * the Context bound, and — when the Context has a store — a code node
 * written on entry (`running`) and completed on exit (`completed`, `error`
 * or `cancelled`). Sync results stay sync; promises are settled through.
 */
export function enterFunctionScope<A extends unknown[], R>(
  frame: Frame,
  info: ScopedFunctionInfo,
  owner: ScopeOwner | undefined,
  target: (...args: A) => R,
  thisArg: unknown,
  args: A,
): R {
  let call: RecordedCall | undefined;
  let result: R;
  let span: Span | undefined;
  try {
    const parent = currentScope();
    const context = owner !== undefined ? owner.contextFor(parent?.context) : (parent?.context ?? new Context());
    const store = context.store;
    const events = owner?.eventsFor === undefined ? parent?.events : owner.eventsFor(parent?.events);
    let writer = store;
    let suppressed = parent?.suppressed;
    if (store !== undefined) {
      checkSameWriter(parent, store);
      if (info.expose === "hidden" || suppressed === store) {
        // A hidden call records nothing, and neither does anything it runs on the same store.
        writer = undefined;
        suppressed = store;
      } else if (parent?.region?.closed) {
        // Work left running after its run was cancelled writes nothing more.
        writer = undefined;
      } else {
        call = openCall(store, parent, context, info, args, events);
      }
    }
    // Logic depth counts Agent entries: a method of an agent entered from outside that agent.
    const entered = enterAgent(parent, owner, info, events, call?.writer.sessionId, call?.nodeId);
    span = entered.span;
    const refusal = entered.refusal;
    const scope = deriveScope(parent);
    scope.reach = entered.reach;
    scope.agentDepth = entered.agentDepth;
    scope.agent = entered.agent;
    scope.context = context;
    scope.events = events;
    scope.fn = info;
    scope.tool = toolOnChain(parent, entered.agent, info);
    scope.writer = writer;
    scope.cursor = call?.cursor;
    scope.suppressed = suppressed;
    scope.trace = entered.trace;
    if (call !== undefined) call.scope = scope;
    if (refusal === undefined) {
      const limits = owner?.scopeLimits ?? parent?.limits;
      scope.limits = limits;
      const data = limits === undefined ? { data: scope } : { ...limits, data: scope };
      result =
        span === undefined
          ? runInFrame(frame, invoke, data, target, thisArg, args, scope)
          : withActiveSpan(span, () => runInFrame(frame, invoke, data, target, thisArg, args, scope));
    } else {
      // Refused by reach: the agent's fallback answers instead (recorded as a degraded result), else the refusal is thrown.
      result = answerRefusal(owner, info, args, refusal) as R;
      if (call !== undefined) call.degraded = refusal;
    }
  } catch (error) {
    if (span !== undefined) {
      failSpan(span, error);
      span.end();
    }
    if (call !== undefined) finishCall(call, undefined, error, true);
    // An async function's callers expect a rejection, even for a refusal at entry.
    if (info.isAsync) return Promise.reject(error) as R;
    throw error;
  }
  if (span !== undefined) return endSpanWith(span, () => finishScopedCall(call, result));
  return finishScopedCall(call, result);
}

/** Settles a scoped call's result: its recorded node (if any) is finished when the result settles. */
function finishScopedCall<R>(call: RecordedCall | undefined, result: R): R {
  if (call === undefined) return result;
  const recorded = call;
  if (result instanceof Promise) {
    return result.then(
      (value: unknown) => {
        finishCall(recorded, value, undefined, false);
        return value;
      },
      (error: unknown) => {
        finishCall(recorded, undefined, error, true);
        throw error;
      },
    ) as R;
  }
  finishCall(recorded, result, undefined, false);
  return result;
}

function invoke<A extends unknown[], R>(target: (...args: A) => R, thisArg: unknown, args: A, scope: CallScope): R {
  if (preInvocationHooks.length !== 0) {
    const call: InvocationInfo = { name: scope.fn?.name ?? "", target: thisArg, args, context: scope.context };
    for (const hook of [...preInvocationHooks]) hook(call);
  }
  return Reflect.apply(target, thisArg, args);
}

/** A code node written on entry and finished on exit. */
interface RecordedCall {
  /** Reach refused the call and the agent's fallback answered: recorded as a degraded result. */
  degraded?: ReachError;
  readonly writer: SessionNodeWriter;
  readonly nodeId: string;
  readonly name: string;
  /** Where nodes written inside the call go. */
  readonly cursor: SessionCursor;
  /** True when the call has no recorded caller: its batch is committed when it finishes. */
  readonly topLevel: boolean;
  readonly parent: CallScope | undefined;
  /** Set once the call's scope exists (a refusal at entry finishes the call before). */
  scope?: CallScope;
}

function openCall(
  writer: SessionNodeWriter,
  parent: CallScope | undefined,
  context: Context,
  info: ScopedFunctionInfo,
  args: readonly unknown[],
  events: RunEvents | undefined,
): RecordedCall {
  const id = newNodeId();
  const metadata: Record<string, unknown> = { status: "running", doc: info.doc };
  if (info.expose !== "full") metadata["expose"] = info.expose;
  if (info.renderRange !== undefined) metadata["renderRange"] = info.renderRange;
  const linked = isLinked(parent, writer);
  if (linked && parent.toolCall !== undefined) metadata["toolCallId"] = parent.toolCall.id;
  try {
    appendEntry(writer, parent, linked, context, id, info.name, args, metadata);
  } catch (error) {
    // Arguments that are not JSON (cycles, bigints, class instances with functions) are
    // recorded in a readable form rather than failing the call; the common case pays nothing extra.
    if (!(error instanceof TypeError)) throw error;
    appendEntry(writer, parent, linked, context, id, info.name, toRecordable(args), metadata);
  }
  parent?.region?.opened(writer, id);
  if (events?.listening === true) events.emit({ type: "node", phase: "start", nodeId: id, role: "code", name: info.name });
  return {
    writer,
    nodeId: id,
    name: info.name,
    cursor: new SessionCursor(writer, id, null),
    // A tool call of a top-level run is committed with the run, when it returns.
    topLevel: !linked,
    parent,
  };
}

/**
 * The node a new top-level call follows: the Context's head when set, else
 * the session head as it is when the call starts (which another process
 * may have moved); the writer reads in a node it has not seen.
 */
export function topLevelPredecessor(writer: NonNullable<Context["store"]>, context: Context): string | null {
  const headId = context.headId;
  if (headId !== undefined && !writer.has(headId)) throw new ContextHeadError(headId, writer.sessionId);
  const predecessor = headId ?? writer.head;
  writer.catchUp(predecessor);
  return predecessor;
}

/** Refuses a second writer on the session the enclosing call records to (rare path: writers differ). */
export function checkSameWriter(parent: CallScope | undefined, store: NonNullable<Context["store"]>): void {
  const active = parent?.writer;
  if (active !== undefined && active !== store && active.sessionId === store.sessionId && active.store === store.store) {
    throw new ContextStoreError(store.sessionId);
  }
}

function appendEntry(
  writer: SessionNodeWriter,
  parent: CallScope | undefined,
  linked: boolean,
  context: Context,
  id: string,
  name: string,
  input: unknown,
  metadata: Record<string, unknown>,
): void {
  if (linked) parent!.cursor!.append({ id, role: "code", name, input, metadata });
  else writer.append({ id, role: "code", name, input, metadata, caller: null, predecessor: topLevelPredecessor(writer, context) });
}

/**
 * Whether nodes written under `parent` link to it: same writer, and the
 * parent is a recorded call or a tool call the runtime opened (whose nodes
 * follow the model turn that asked for them).
 */
function isLinked(
  parent: CallScope | undefined,
  writer: SessionNodeWriter,
): parent is CallScope & { readonly cursor: SessionCursor } {
  const cursor = parent?.cursor;
  return cursor !== undefined && cursor.writer === writer && (cursor.callId !== null || parent!.toolCall !== undefined);
}

/**
 * Finishes a recorded call: `completed` with its value, or — when it
 * `failed`, whatever was thrown, even `undefined` — `cancelled` for an
 * abort and `error` otherwise. Nothing is written when the call's run was
 * cancelled meanwhile (the cancellation already closed the node).
 */
function finishCall(call: RecordedCall, value: unknown, error: unknown, failed: boolean): void {
  const scope = call.scope ?? call.parent;
  const region = call.parent?.region;
  if (region !== undefined) {
    if (region.closed) return;
    region.closedNode(call.nodeId);
  }
  const { writer, nodeId } = call;
  let status: SessionNodeStatus = !failed
    ? "completed"
    : InterruptedError.isInstance(error) || InterruptedError.isInstance(scope?.signal?.reason)
      ? "interrupted"
      : isCancellation(error) || scope?.signal?.aborted === true
        ? "cancelled"
        : "error";
  if (failed) writer.update(nodeId, { metadata: { status, error: describeError(error) } });
  else {
    const metadata: Record<string, unknown> = call.degraded === undefined ? { status } : { status, degraded: true, reachError: describeError(call.degraded) };
    try {
      writer.update(nodeId, { output: value, metadata });
    } catch (failure) {
      if (!(failure instanceof TypeError)) throw failure;
      writer.update(nodeId, { output: toRecordable(value), metadata });
    }
  }
  // Nothing acknowledged to the caller may be lost: a finished top-level call is committed now,
  // and fails if its own nodes cannot be (another call's failed batch is retried, not blamed on it).
  const events = scope?.events;
  if (call.topLevel) {
    try {
      writer.flushCall(nodeId);
    } catch (storageError) {
      // The caller gets the storage error: the node, committed once the fault clears, says so too.
      status = "error";
      writer.update(nodeId, { metadata: { status, error: describeError(storageError) } });
      if (events?.listening === true) events.emit({ type: "node", phase: "end", nodeId, role: "code", name: call.name, status });
      throw storageError;
    }
  }
  if (events?.listening === true) events.emit({ type: "node", phase: "end", nodeId, role: "code", name: call.name, status });
}
