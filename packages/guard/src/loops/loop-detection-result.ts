/**
 * The detectors of {@link ToolLoopDetector}, in the order they are checked.
 * `argument_churn` and `repeated_error` go beyond OpenClaw.
 */
export type LoopDetectorKind =
  | "unknown_tool_repeat"
  | "global_circuit_breaker"
  | "known_poll_no_progress"
  | "ping_pong"
  | "generic_repeat"
  | "argument_churn"
  | "repeated_error";

/** How serious a loop is: a warning is shown to the model, a critical call is blocked. */
export type LoopLevel = "warning" | "critical";

/**
 * A loop found by {@link ToolLoopDetector.detect} for the call about to run.
 *
 * @example
 * ```ts
 * const verdict = detector.detect("search", { q: "x" }, { runId });
 * if (verdict.stuck && verdict.level === "critical") blockCall(verdict.message);
 * ```
 */
export interface LoopDetection {
  readonly stuck: true;
  /** `warning`: let the call run and tell the model; `critical`: block the call. */
  readonly level: LoopLevel;
  /** The detector that matched. */
  readonly detector: LoopDetectorKind;
  /** The recorded calls forming the pattern (the call being checked not included). */
  readonly count: number;
  /** The tool of the call being checked. */
  readonly toolName: string;
  /** For `ping_pong`: the other tool of the alternation (may equal `toolName`). */
  readonly pairedToolName?: string;
  /** Text for the model and the log: starts with `WARNING:` or `CRITICAL:`, names the tool and the count, says what to do instead. */
  readonly message: string;
  /** Stable identity of this loop (detector and pattern), for coalescing repeated warnings about it. */
  readonly warningKey: string;
}

/**
 * The verdict of {@link ToolLoopDetector.detect}: `{ stuck: false }` or a
 * {@link LoopDetection}.
 */
export type LoopDetectionResult = { readonly stuck: false } | LoopDetection;
