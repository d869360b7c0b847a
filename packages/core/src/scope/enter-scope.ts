import * as guard from "@rein/guard";
import type { ChainLimits, Frame } from "@rein/guard";
import { Context } from "../context/context";
import { CancelledError, ContextHeadError, ContextStoreError } from "../errors/core-errors";
import { currentScope, newNodeId, toRecordable, type CallScope, type ScopedFunctionInfo } from "./call-scope";
import { preInvocationHooks, type InvocationInfo } from "./hooks";

// Held in a const: the package's re-exported binding is a getter, and this is the hot path.
const runInFrame = guard.runInFrame;

/** Where a scoped call takes its Context and guard limits from (an Agent). */
export interface ScopeOwner {
  /** The Context a call of the owner binds, given the caller's (own Context first, then the caller's). */
  contextFor(callerContext: Context | undefined): Context;
  /** Guard limits of the owner (recursion ceiling, cycle repeats, chain depth); undefined = defaults. */
  readonly scopeLimits: ChainLimits | undefined;
}

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
  const parent = currentScope();
  const context =
    owner !== undefined ? owner.contextFor(parent?.context) : (parent?.context ?? new Context());
  const store = context.store;
  let writer = store;
  let nodeId: string | undefined;
  // A call with no recorded caller ends a top-level call: its batch is committed when it finishes.
  let topLevel = false;
  let suppressed = parent?.suppressed;
  if (store !== undefined) {
    checkSameWriter(parent, store);
    if (info.expose === "hidden" || suppressed === store) {
      // A hidden call records nothing, and neither does anything it runs on the same store.
      writer = undefined;
      suppressed = store;
    } else {
      topLevel = !(isLinked(parent, store) && parent.nodeId !== undefined);
      nodeId = writeEntryNode(store, parent, context, info, args);
    }
  }
  const scope: CallScope = {
    context,
    execution: parent?.execution,
    fn: info,
    writer,
    nodeId,
    tail: null,
    toolCall: undefined,
    suppressed,
  };
  const limits = owner?.scopeLimits;
  let result: R;
  try {
    result = runInFrame(frame, invoke, limits === undefined ? { data: scope } : { ...limits, data: scope }, target, thisArg, args, scope);
  } catch (error) {
    if (nodeId !== undefined) finishNode(scope, nodeId, undefined, error, topLevel);
    // An async function's callers expect a rejection, even for a refusal at entry.
    if (info.isAsync) return Promise.reject(error) as R;
    throw error;
  }
  if (nodeId === undefined) return result;
  if (result instanceof Promise) {
    return result.then(
      (value: unknown) => {
        finishNode(scope, nodeId, value, undefined, topLevel);
        return value;
      },
      (error: unknown) => {
        finishNode(scope, nodeId, undefined, error, topLevel);
        throw error;
      },
    ) as R;
  }
  finishNode(scope, nodeId, result, undefined, topLevel);
  return result;
}

function invoke<A extends unknown[], R>(target: (...args: A) => R, thisArg: unknown, args: A, scope: CallScope): R {
  if (preInvocationHooks.length !== 0) {
    const call: InvocationInfo = { name: scope.fn?.name ?? "", target: thisArg, args, context: scope.context };
    for (const hook of [...preInvocationHooks]) hook(call);
  }
  return Reflect.apply(target, thisArg, args);
}

function writeEntryNode(
  writer: NonNullable<Context["store"]>,
  parent: CallScope | undefined,
  context: Context,
  info: ScopedFunctionInfo,
  args: readonly unknown[],
): string {
  const id = newNodeId();
  const linked = isLinked(parent, writer);
  const metadata: Record<string, unknown> = { status: "running", doc: info.doc };
  if (info.expose !== "full") metadata["expose"] = info.expose;
  if (info.renderRange !== undefined) metadata["renderRange"] = info.renderRange;
  let predecessor: string | null;
  if (linked) {
    predecessor = parent.tail;
    if (parent.toolCall !== undefined) metadata["toolCallId"] = parent.toolCall.id;
    parent.tail = id;
  } else {
    predecessor = topLevelPredecessor(writer, context);
  }
  const node = {
    id,
    role: "code" as const,
    name: info.name,
    input: args as unknown,
    caller: linked ? (parent.nodeId ?? null) : null,
    predecessor,
    metadata,
  };
  try {
    writer.append(node);
  } catch (error) {
    // Arguments that are not JSON (cycles, bigints, class instances with functions) are
    // recorded in a readable form rather than failing the call; the common case pays nothing extra.
    if (!(error instanceof TypeError)) throw error;
    writer.append({ ...node, input: toRecordable(args) });
  }
  parent?.execution?.emit({ type: "node-start", nodeId: id, role: "code", name: info.name });
  return id;
}

/** The node a new top-level call follows: the Context's head when set, else the session head. */
export function topLevelPredecessor(writer: NonNullable<Context["store"]>, context: Context): string | null {
  const headId = context.headId;
  if (headId === undefined) return writer.head;
  // Rare path (explicit branching): commit queued writes so the check sees them.
  writer.flush();
  if (!writer.store.hasNode(writer.sessionId, headId)) throw new ContextHeadError(headId, writer.sessionId);
  return headId;
}

/** Refuses a second writer on the session the enclosing call records to (rare path: writers differ). */
export function checkSameWriter(parent: CallScope | undefined, store: NonNullable<Context["store"]>): void {
  const active = parent?.writer;
  if (active !== undefined && active !== store && active.sessionId === store.sessionId && active.store === store.store) {
    throw new ContextStoreError(store.sessionId);
  }
}

/**
 * Whether nodes written under `parent` link to it: same writer, and the
 * parent is a recorded call or a tool call the runtime opened (whose nodes
 * follow the model turn that asked for them).
 */
function isLinked(parent: CallScope | undefined, writer: NonNullable<Context["store"]>): parent is CallScope {
  return parent !== undefined && parent.writer === writer && (parent.nodeId !== undefined || parent.toolCall !== undefined);
}

function finishNode(scope: CallScope, nodeId: string, value: unknown, error: unknown, topLevel: boolean): void {
  const writer = scope.writer;
  if (writer === undefined) return;
  const status = error === undefined ? "completed" : isCancellation(error) ? "cancelled" : "error";
  const metadata: Record<string, unknown> = { status };
  if (error !== undefined) metadata["error"] = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  if (error !== undefined) writer.update(nodeId, { metadata });
  else {
    try {
      writer.update(nodeId, { output: value, metadata });
    } catch (failure) {
      if (!(failure instanceof TypeError)) throw failure;
      writer.update(nodeId, { output: toRecordable(value), metadata });
    }
  }
  // Nothing acknowledged to the caller may be lost: a finished top-level call is committed now.
  if (topLevel) writer.flush();
  scope.execution?.emit({ type: "node-end", nodeId, role: "code", name: scope.fn?.name ?? "", status });
}

/** True for `CancelledError` and for aborts (`AbortError`). */
export function isCancellation(error: unknown): boolean {
  return CancelledError.isInstance(error) || (error instanceof Error && error.name === "AbortError");
}
