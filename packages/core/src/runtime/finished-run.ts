/**
 * How a model-tool loop's promise ends: its nodes committed, its
 * {@link RunResult} figured from its own ledger, `run-finish` reported.
 * @internal
 */
import type { SessionCursor } from "../scope/session-cursor";
import { isCancellation } from "./cancellation";
import type { ExecResult, LoopOutcome } from "./exec-result";
import type { RunEvents } from "./run-events";
import type { RunLedger } from "./run-ledger";
import type { RunResult } from "./run-result";

/**
 * `run`, with its {@link RunResult}: the figures of its own ledger (its
 * nested runs included, concurrent siblings never). Reports `run-finish`
 * last, whether the run completed, paused or failed.
 * @internal
 */
export async function finishedRun(
  run: Promise<LoopOutcome>,
  at: {
    ledger: RunLedger;
    events: RunEvents;
    cursor: SessionCursor | undefined;
    signal: AbortSignal | undefined;
    onFinish: ((result: RunResult) => void) | undefined;
  },
): Promise<ExecResult> {
  const result = (outcome: LoopOutcome | undefined, error?: unknown): RunResult => {
    const { ledger } = at;
    // A run whose signal fired was cancelled, whatever reason the signal carries (abort(new Error("stop")) too).
    const cancelled = at.signal?.aborted === true || isCancellation(error);
    const status = outcome === undefined ? (cancelled ? "cancelled" : "error") : outcome.paused === undefined ? "completed" : "paused";
    return {
      text: outcome?.paused === undefined ? (outcome?.text ?? "") : "",
      status,
      usage: ledger.usage(),
      requests: ledger.requests,
      toolCalls: ledger.toolCalls,
      ...(at.cursor === undefined ? {} : { sessionId: at.cursor.writer.sessionId }),
      ...(at.cursor?.tail == null ? {} : { headId: at.cursor.tail }),
      ...(outcome?.output === undefined ? {} : { output: outcome.output }),
      ...(outcome === undefined ? { error } : {}),
    };
  };
  let outcome: LoopOutcome;
  try {
    outcome = await run;
  } catch (error) {
    const failed = result(undefined, error);
    at.onFinish?.(failed);
    if (at.events.listening) at.events.emit({ type: "run-finish", result: failed });
    throw error;
  }
  const finished = result(outcome);
  at.onFinish?.(finished);
  if (at.events.listening) at.events.emit({ type: "run-finish", result: finished });
  return { ...outcome, run: finished };
}

/** @internal `run`, settled once the nodes it wrote are committed (also when it failed: what it recorded is kept). */
export async function committedRun(run: Promise<LoopOutcome>, cursor: SessionCursor & { written: Set<string> }): Promise<LoopOutcome> {
  try {
    return await run;
  } finally {
    if (cursor.written.size > 0) cursor.writer.flushNodes(cursor.written);
  }
}
