import { currentFrameData } from "@rein/guard";
import type { Context } from "../context/context";
import type { Execution } from "../runtime/execution";
import type { SessionNodeWriter } from "../session/session-node-writer";

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
 * AsyncLocalStorage serves the guard and core): the bound Context, the
 * execution (step budget, refusals) when a run is active, and where the
 * next node written in this scope links.
 */
export interface CallScope {
  readonly context: Context;
  readonly execution: Execution | undefined;
  /** The function this scope runs, when it is a scoped function. */
  readonly fn: ScopedFunctionInfo | undefined;
  /** Where nodes of this scope are recorded; undefined records nothing. */
  readonly writer: SessionNodeWriter | undefined;
  /** The code node of this scope's call, when recorded. */
  readonly nodeId: string | undefined;
  /** The last node written directly inside this scope (the predecessor of the next). */
  tail: string | null;
  /** Set on the scope a tool call runs in; consumed by the call it makes. */
  readonly toolCall: PendingToolCall | undefined;
  /** The writer an `expose: "hidden"` call above this scope silenced: nothing under it is recorded there. */
  readonly suppressed?: SessionNodeWriter;
}

const frameData = currentFrameData;

/** The innermost Rein call scope, if any. */
export function currentScope(): CallScope | undefined {
  return frameData() as CallScope | undefined;
}

let idPrefix: string | undefined;
let idCounter = 0;

/** A process-unique node id: random per process, counted within it. */
export function newNodeId(): string {
  idPrefix ??= `${process.pid.toString(36)}${Math.random().toString(36).slice(2, 8)}-`;
  return idPrefix + (++idCounter).toString(36);
}

/**
 * A JSON-safe copy of a value for recording: functions, symbols, bigints and
 * cycles become readable strings instead of failing the call being recorded.
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
    return String(value);
  }
}
