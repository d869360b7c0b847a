import { randomBytes } from "node:crypto";
import { currentFrameData } from "@rein/guard";
import type { ChainLimits, ReachRun } from "@rein/guard";
import type { Context } from "../context/context";
import type { Execution, StepBudget } from "../runtime/execution";
import type { CancellationRegion } from "../runtime/cancellation";
import type { RunEvents } from "../runtime/run-events";
import type { RunLedger } from "../runtime/run-ledger";
import { randomIdText, type SessionNodeWriter } from "@rein/session";
import type { SessionCursor } from "./session-cursor";
import type { TraceScope } from "../telemetry/trace-scope";

/** What the runtime needs to know about the function a scope runs. */
export interface ScopedFunctionInfo {
  /** Readable name (`Researcher.research`). */
  readonly name: string;
  /** The function's description, shown as its job in the situational prefix. */
  readonly doc: string;
  /** How the function's node is exposed in history. @default "full" */
  readonly expose: "io" | "full" | "llm" | "hidden";
  /** How far history reaches for requests made inside this function. */
  readonly renderRange?: { readonly callers?: number; readonly subcalls?: number };
  /** The name the function has as a model tool, when it is one. */
  readonly toolName?: string;
  /** True for async functions: a refusal at entry then rejects instead of throwing synchronously. */
  readonly isAsync?: boolean;
}

/** A tool call being executed by the runtime, so the scope it opens can link to the model turn. */
export interface PendingToolCall {
  readonly id: string;
  readonly name: string;
  /** The llm node that asked for the call. */
  readonly requestedBy: string | null;
}

/**
 * What core keeps on each guard frame (in the frame's `data` slot, so one
 * AsyncLocalStorage serves the guard and core): the bound Context, the run
 * (shared budget, event sink, signal) when one is active, and the session
 * cursor that owns where the next node written in this scope goes.
 */
export interface CallScope {
  readonly context: Context;
  readonly execution: Execution | undefined;
  /** Where events of the innermost running loop go (its runtime's listener, then every outer one). */
  readonly events: RunEvents | undefined;
  /** The function this scope runs, when it is a scoped function. */
  readonly fn: ScopedFunctionInfo | undefined;
  /** Where nodes of this scope are recorded; undefined records nothing. */
  readonly writer: SessionNodeWriter | undefined;
  /**
   * The position nodes written directly inside this scope take (on
   * {@link writer}); undefined when they start a new top-level call. Shared,
   * never copied: whoever writes through it moves it.
   */
  readonly cursor: SessionCursor | undefined;
  /** Set on the scope a tool call runs in; consumed by the call it makes. */
  readonly toolCall: PendingToolCall | undefined;
  /** The writer an `expose: "hidden"` call above this scope silenced: nothing under it is recorded there. */
  readonly suppressed: SessionNodeWriter | undefined;
  /** The AbortSignal of the innermost run or tool call (read with `currentSignal()`). */
  readonly signal: AbortSignal | undefined;
  /** The calls recorded under {@link signal}, cancelled when it fires. */
  readonly region: CancellationRegion | undefined;
  /** The model-request budget of the innermost running loop. */
  readonly steps: StepBudget | undefined;
  /** The reach run this scope belongs to (limits, usage, checks), when a reach policy applies. */
  readonly reach: ReachRun | undefined;
  /** Logic depth: Agent entries on the chain down to this scope (helpers and plain functions never count). */
  readonly agentDepth: number;
  /** The agent whose method this scope (or the nearest enclosing one) runs. */
  readonly agent: object | undefined;
  /** The OpenTelemetry span of the innermost traced call (only while an SDK is registered). */
  readonly trace: TraceScope | undefined;
  /** What the innermost running loop's run used (rolls up to the runs it is nested in). */
  readonly ledger: RunLedger | undefined;
  /** The guard limits of the innermost agent or loop: a call with no agent of its own (a `tool()`) keeps them. */
  readonly limits: ChainLimits | undefined;
  /** The nearest function on the chain that {@link agent}'s model sees as a tool (see {@link toolOnChain}). */
  readonly tool: ScopedFunctionInfo | undefined;
}

/**
 * A child scope while it is being made: every field of {@link CallScope},
 * writable, none optional. {@link deriveScope} fills it from the parent;
 * the caller sets what its scope changes, then runs code in it.
 */
export type ScopeDraft = { -readonly [K in keyof CallScope]: CallScope[K] };

/** No parent: nothing inherited. */
const EMPTY_SCOPE: ScopeDraft = {
  context: undefined as unknown as Context,
  execution: undefined,
  events: undefined,
  fn: undefined,
  writer: undefined,
  cursor: undefined,
  toolCall: undefined,
  suppressed: undefined,
  signal: undefined,
  region: undefined,
  steps: undefined,
  reach: undefined,
  agentDepth: 0,
  agent: undefined,
  trace: undefined,
  ledger: undefined,
  limits: undefined,
  tool: undefined,
};

/**
 * The one way a child call scope is made: a copy of every field of the
 * parent (the top has none; `context` must then be set), except
 * {@link CallScope.toolCall}, which only the scope a tool call runs in sets
 * and the first call it makes consumes. The caller then sets what its
 * scope changes. Every wrapper (`withReachBudget`, `withRunListener`,
 * `Context.bind`, tool calls, steps, agent entries, loops) goes through
 * here, so a field added to {@link CallScope} is carried by all of them —
 * and {@link ScopeDraft} makes leaving it out of this copy a compile error.
 * One object literal of one shape: a scoped call pays ~15 ns for it, where
 * an object spread of the parent and a patch cost ~200 ns.
 * @internal
 */
export function deriveScope(parent: CallScope | undefined): ScopeDraft {
  const base = parent ?? EMPTY_SCOPE;
  return {
    context: base.context,
    execution: base.execution,
    events: base.events,
    fn: base.fn,
    writer: base.writer,
    cursor: base.cursor,
    toolCall: undefined,
    suppressed: base.suppressed,
    signal: base.signal,
    region: base.region,
    steps: base.steps,
    reach: base.reach,
    agentDepth: base.agentDepth,
    agent: base.agent,
    trace: base.trace,
    ledger: base.ledger,
    limits: base.limits,
    tool: base.tool,
  };
}

/**
 * The nearest function on the chain that `agent`'s model sees as a tool:
 * `info` when it is one, else the caller's while the call stays in the same
 * agent (a tool method's scoped helper that asks is guided with the tool's
 * name, job and depth), else none.
 * @internal
 */
export function toolOnChain(parent: CallScope | undefined, agent: object | undefined, info: ScopedFunctionInfo | undefined): ScopedFunctionInfo | undefined {
  if (info?.toolName !== undefined) return info;
  return parent !== undefined && parent.agent === agent ? parent.tool : undefined;
}

const frameData = currentFrameData;

/** The innermost Rein call scope, if any. */
export function currentScope(): CallScope | undefined {
  return frameData() as CallScope | undefined;
}

/**
 * The AbortSignal of the run or tool call the current code runs in: an
 * Agent method called as a tool reads it to stop its own work when the run
 * is cancelled or the tool call times out (`methodOptions.timeout`).
 *
 * @example
 * ```ts
 * async crawl(url: string) {
 *   const response = await fetch(url, { signal: currentSignal() });
 *   return response.text();
 * }
 * ```
 */
export function currentSignal(): AbortSignal | undefined {
  return currentScope()?.signal;
}

let idPrefix: string | undefined;
let idCounter = 0;

/**
 * A node id unique across processes and machines: 128 random bits per
 * process (from the system's CSPRNG, drawn on first use, so a forked or
 * restarted process draws its own), then a counter within the process. Two
 * processes share a prefix with probability about n²/2¹²⁹ — never, in
 * practice — so one session can take nodes from any number of writers.
 */
export function newNodeId(): string {
  idPrefix ??= `${randomIdText(randomBytes)}-`;
  return idPrefix + (++idCounter).toString(36);
}

/**
 * A JSON-safe copy of a value, as Rein records a call's arguments and
 * result: functions, symbols, bigints and cycles become readable strings
 * (`10n`, `[circular]`) instead of failing the call being recorded, and a
 * value nothing can print is `[unprintable]`.
 * @example
 * ```ts
 * toRecordable({ total: 10n }); // { total: "10n" }
 * ```
 */
export function toRecordable(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  const type = typeof value;
  if (type === "string" || type === "number" || type === "boolean") return value;
  const seen = new WeakSet<object>();
  try {
    return JSON.parse(
      JSON.stringify(value, (_key, item: unknown) => {
        if (typeof item === "bigint") return `${item}n`;
        if (typeof item === "function") return `[function ${(item as { name?: string }).name || "anonymous"}]`;
        if (typeof item === "symbol") return item.toString();
        if (item instanceof Error) return { name: item.name, message: item.message };
        if (typeof item === "object" && item !== null) {
          if (seen.has(item)) return "[circular]";
          seen.add(item);
        }
        return item;
      }),
    ) as unknown;
  } catch {
    try {
      return String(value);
    } catch {
      // An object with no prototype, or whose toString throws.
      return "[unprintable]";
    }
  }
}
