// What ToolLoopDetector takes and reports besides its verdicts: the calls and outcomes it records, detect options, stats.

/** A tool call as {@link ToolLoopDetector.recordCall} receives it. */
export interface ToolCallInput {
  /** The tool called. */
  toolName: string;
  /** The call's arguments, hashed with {@link hashToolCall}. */
  params: unknown;
  /** The provider's id of the call; lets the outcome find its call exactly. */
  toolCallId?: string;
  /** The run the call belongs to. @default undefined (its own scope) */
  runId?: string;
}

/** A finished tool call as {@link ToolLoopDetector.recordOutcome} receives it. */
export interface ToolOutcomeInput extends ToolCallInput {
  /** What the tool returned. */
  result?: unknown;
  /** What the tool threw; when not `undefined` the call failed. */
  error?: unknown;
}

/** Options of {@link ToolLoopDetector.detect}. */
export interface DetectOptions {
  /** Compare only with calls of this run. @default undefined (the calls recorded without a run id) */
  runId?: string;
  /**
   * The id of the call being checked. If that call was already recorded
   * (`recordCall` before `detect`), it is left out of the comparison.
   */
  toolCallId?: string;
  /** The tool declares itself a poll tool (`tool({ poll: true })`), beside `config.pollTools`. @default false */
  poll?: boolean;
}

/** What {@link ToolLoopDetector.stats} reports. */
export interface LoopDetectorStats {
  /** Calls recorded since the detector was created (or the run began), not only those in the window. */
  totalCalls: number;
  /** Distinct call patterns (tool and arguments) in the window. */
  uniquePatterns: number;
  /** The pattern seen most often in the window, if any. */
  mostFrequent?: { toolName: string; argsHash: string; count: number };
}
