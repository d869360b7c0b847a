import { ModelBehaviorError } from "../errors/rein-error";
import type { LoopDetectorKind } from "./loop-detection-result";

/** Options of {@link ToolLoopError}. */
export interface ToolLoopErrorOptions {
  /** Calls blocked in the run before it was ended. @default undefined (not stated in the message) */
  blockedCalls?: number;
  /** The error that led to this one. */
  cause?: unknown;
}

/**
 * Ends a run whose model kept making calls the loop detector blocked
 * (`maxBlockedCalls` blocks, default 3): a block alone lets a model retry for
 * hours. Model misbehaviour, not a refusal to report back, so it extends
 * {@link ModelBehaviorError} but not `GuardError`.
 *
 * @example
 * ```ts
 * if (ToolLoopError.isInstance(error)) console.log(error.detector, error.toolName, error.count);
 * ```
 */
export class ToolLoopError extends ModelBehaviorError {
  static {
    this.defineErrorName("ToolLoopError");
  }

  /** The detector of the last block. */
  readonly detector: LoopDetectorKind;
  /** The pattern count of the last block. */
  readonly count: number;
  /** The tool of the last blocked call. */
  readonly toolName: string;
  /** Calls blocked in the run, when given. */
  readonly blockedCalls?: number;

  constructor(detector: LoopDetectorKind, count: number, toolName: string, options: ToolLoopErrorOptions = {}) {
    const blocked = options.blockedCalls === undefined ? "" : ` after ${options.blockedCalls} blocked calls`;
    super(
      `CRITICAL: run stopped${blocked}: ${toolName} is stuck in a tool loop (${detector}, ${count} repeated calls). ` +
        `Give the agent a different approach, tighter instructions or other tools, or raise the loopDetection thresholds if the repetition is intended.`,
      options,
    );
    this.detector = detector;
    this.count = count;
    this.toolName = toolName;
    if (options.blockedCalls !== undefined) this.blockedCalls = options.blockedCalls;
  }
}
