import type { Context } from "../context/context";
import type { RunResult } from "../runtime/run-result";
import type { TurnResult } from "./turns";

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
