import type { ContentBlock } from "../model/content";
import type { Context } from "../context/context";
import type { RunEventListener } from "../runtime/runtime-events";
import type { RunUsage } from "../runtime/run-result";
import type { PausedRun } from "../runtime/turn-pause";

/**
 * One conversation turn: the user's input, and optionally the session it
 * belongs to and the node it continues from.
 * @example
 * ```ts
 * await agent.runTurn({ input: "And tomorrow?", sessionId: "chat-42" }, { context: Context.forSession(store, "chat-42") });
 * ```
 */
export interface TurnRequest {
  readonly input: string | readonly ContentBlock[];
  /** Must be the Context's session when given (else {@link SessionMismatchError}, before anything is created). */
  readonly sessionId?: string;
  /** Continue after this node instead of the session head (to branch). */
  readonly headId?: string;
}

/**
 * Options of a turn.
 * @example
 * ```ts
 * await agent.runTurn({ input: "Hi" }, { onEvent: (event) => event.type === "text-delta" && process.stdout.write(event.text) });
 * ```
 */
export interface TurnOptions {
  /** @default the agent's Context (a {@link ChatAgent}'s own session when it has none) */
  readonly context?: Context;
  /** Receives the turn's events, as `agent.stream()` yields them. */
  readonly onEvent?: RunEventListener;
  readonly signal?: AbortSignal;
}

/** How a turn ended. */
export type TurnStatus = "completed" | "paused" | "cancelled" | "error";

/**
 * What a turn resolves with. A turn that fails resolves too, with its
 * status and `error`; only bad input rejects.
 * @example
 * ```ts
 * const { status, text, usage, sessionId, headId } = await chat.chat("Hello");
 * ```
 */
export interface TurnResult {
  readonly status: TurnStatus;
  /** The final answer's text (`""` when the turn did not complete). */
  readonly text: string;
  /** The structured answer, with a `responseFormat`. */
  readonly output?: unknown;
  readonly usage: RunUsage;
  /** Model requests of the turn, nested agents' included. */
  readonly requests: number;
  /** The session the turn was recorded in (undefined without a store). */
  readonly sessionId: string | undefined;
  /** The session head after the turn: where the next turn continues. */
  readonly headId: string | undefined;
  /** Why the turn did not complete. */
  readonly error?: unknown;
  /**
   * A paused turn's state: pass it to `resumeTurn` (plain JSON: store it,
   * resume in another process on the same store). Also set on a
   * `resumeTurn` that ended (cancelled, refused by reach, failed) before it
   * carried the turn on: the same pause under a new id, to resume again.
   */
  readonly continuation?: TurnContinuation;
}

/**
 * Where a paused turn stopped, as plain JSON. `pending[0]` is the tool call
 * that waits for approval.
 * @example
 * ```ts
 * const turn = await agent.chat("Deploy the api service.");
 * if (turn.status === "paused") {
 *   const { toolName, input } = turn.continuation!.awaiting;
 *   await agent.resumeTurn(turn.continuation!, { approve: await askOperator(toolName, input) });
 * }
 * ```
 */
export interface TurnContinuation {
  readonly version: 1;
  /**
   * Names this pause: a continuation is resumed once (a second
   * `resumeTurn` of it, here or in another process on the same store, is a
   * `ContinuationConsumedError`). Absent from continuations made before ids.
   */
  readonly id?: string;
  /** Why the turn paused: a call waits for approval, or `agent.pause()` was called. */
  readonly reason: "approval" | "pause";
  readonly sessionId: string | undefined;
  /** The call waiting for approval (reason `approval`). */
  readonly awaiting?: { readonly toolCallId: string; readonly toolName: string; readonly input: unknown };
  /** @internal the paused run. */
  readonly run: PausedRun;
}

/**
 * Options of `resumeTurn`.
 * @example
 * ```ts
 * await agent.resumeTurn(continuation, { approve: true, context: Context.forSession(store, continuation.sessionId!) });
 * ```
 */
export interface ResumeTurnOptions extends TurnOptions {
  /** The answer to a pending approval (required then): true runs the call, false tells the model it was not approved. */
  readonly approve?: boolean;
}
