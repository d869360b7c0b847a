import type { LoopCarry } from "./loop-guard";
import type { ContentBlock, ToolResultBlock, ToolUseBlock } from "../model/content";

/**
 * Where a paused run stopped: the assistant turn that asked for tools, the
 * results of the calls that already ran, and the calls still to run (the
 * first of them waits for approval), and what its loop guard had seen
 * ({@link LoopCarry}: an approval cycle does not reset detection). Plain JSON.
 * @internal
 */
export interface PausedRun extends Partial<LoopCarry> {
  /** `approval`: `pending[0]` waits for a person; `pause`: the turn was asked to pause (nothing pending). */
  readonly reason: "approval" | "pause";
  /** The llm node of the request that asked for the calls, when recorded. */
  readonly requestedBy: string | null;
  readonly assistant: readonly ContentBlock[];
  readonly results: readonly ToolResultBlock[];
  readonly pending: readonly ToolUseBlock[];
  /** The turn's first llm node: from it on, the turn's requests are rendered on resume whatever the history filter. */
  readonly turnStart?: string;
  /** The turn already sent its one structured-output repair request: a resume does not send another. */
  readonly repaired?: boolean;
}

/**
 * A paused run to carry on (`resumeTurn`): its state, and the answer to the
 * pending approval.
 * @internal
 */
export interface RunResumption extends PausedRun {
  readonly approve: boolean;
  /** Called once the resumed run begins to carry the turn on (before its first tool call): from then on it is spent. */
  readonly onStart?: () => void;
}
