import type { Context } from "../context/context";
import type { RunResult } from "../runtime/run-result";
import type { PausedRun } from "../runtime/turn-pause";
import type { TurnContinuation, TurnResult } from "./turns";
import { newContinuationId } from "./consume-continuation";

/** The usage of a turn that made no request. */
export const NO_USAGE = Object.freeze({ inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheCreationInputTokens: 0 });

/** A turn's result from its run's, with where the session now stands. */
export function turnResult(run: RunResult, writer: Context["store"]): TurnResult {
  let headId: string | undefined;
  try {
    headId = writer?.head ?? undefined;
  } catch {
    headId = run.headId;
  }
  return {
    status: run.status,
    text: run.text,
    ...(run.output === undefined ? {} : { output: run.output }),
    usage: run.usage,
    requests: run.requests,
    sessionId: writer?.sessionId,
    headId,
    ...(run.status === "completed" || run.status === "paused" ? {} : { error: run.error }),
  };
}

/** A paused turn's result: its continuation, plain JSON, naming the call that waits for approval (if one does). */
export function pausedTurnResult(run: RunResult, stopped: PausedRun, writer: Context["store"]): TurnResult {
  const waiting = stopped.pending[0];
  const continuation: TurnContinuation = {
    version: 1,
    id: newContinuationId(),
    reason: stopped.reason,
    sessionId: writer?.sessionId,
    ...(waiting === undefined ? {} : { awaiting: { toolCallId: waiting.id, toolName: waiting.name, input: waiting.input } }),
    // A JSON round trip: the continuation is data, whatever the content blocks held.
    run: JSON.parse(JSON.stringify(stopped)) as PausedRun,
  };
  return { ...turnResult(run, writer), status: "paused", continuation };
}
