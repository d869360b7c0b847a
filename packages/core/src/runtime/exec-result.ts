import type { ContentBlock } from "../model/content";
import type { StopReason, Usage } from "../model/model-provider";
import type { RunResult } from "./run-result";
import type { PausedRun } from "./turn-pause";

/** What one model-tool loop resolves with. */
export interface ExecResult {
  /** The final answer's text. */
  readonly text: string;
  /** The final assistant turn. */
  readonly content: readonly ContentBlock[];
  readonly stopReason: StopReason;
  /** Tokens used by this loop's requests (not its nested runs'). */
  readonly usage: Usage;
  /** Model requests made by this loop. */
  readonly requests: number;
  /** The validated structured answer, when the request had a `responseFormat`. */
  readonly output?: unknown;
  /** The run as a whole: usage, requests and tool calls of this loop and every run nested in it. */
  readonly run: RunResult;
  /** Set when a turn paused (a call waits for approval, or a pause was asked): where to carry on. @internal */
  readonly paused?: PausedRun;
}

/** What one loop's iterations resolve with (a paused turn carries `paused`); {@link finishedRun} adds the run's figures. @internal */
export type LoopOutcome = Omit<ExecResult, "run">;
