import { DEFAULT_LOOP_DETECTION_CONFIG } from "./loop-detection-config";
import type { PostCompactionGuardConfig } from "./loop-detection-options";
import { PostCompactionLoopPersistedError } from "./post-compaction-loop-persisted-error";

/** One tool call as the {@link PostCompactionGuard} sees it: three hashes. */
export interface PostCompactionCall {
  /** The tool called. */
  toolName: string;
  /** {@link hashToolCall} of the call (a record's `argsHash`). */
  argsHash: string;
  /** {@link hashOutcome} of its outcome (a record's `resultHash`); a call without one never counts as a repeat. */
  resultHash?: string;
}

/** What {@link PostCompactionGuard.observe} concluded. */
export interface PostCompactionObservation {
  /** The run must end: throw {@link PostCompactionObservation.error}. */
  shouldAbort: boolean;
  /** Whether the guard is still watching after this call. */
  armed: boolean;
  /** Calls left in the window after this one (0 once disarmed). */
  remainingAttempts: number;
  /** Times this call's (tool, arguments, result) triple was seen in the window (0 when not watched). */
  count: number;
  /** The error to end the run with, when `shouldAbort`. */
  error?: PostCompactionLoopPersistedError;
}

/** Options of {@link PostCompactionGuard}. */
export interface PostCompactionGuardOptions {
  /**
   * The loop-detection master switch (`LoopDetectionConfig.enabled` as the
   * user wrote it): the guard runs unless it is explicitly `false`.
   * @default undefined (the guard runs)
   */
  enabled?: boolean;
}

/**
 * Catches a model that goes straight back into its loop after a context
 * compaction. {@link arm} it after each compaction retry: it then watches the
 * next `windowSize` tool calls, and if one same (tool, arguments, result)
 * triple fills the window, {@link observe} answers `shouldAbort` with a
 * {@link PostCompactionLoopPersistedError}. The window closes after
 * `windowSize` calls whatever happened; changing results or arguments never
 * abort.
 *
 * @example
 * ```ts
 * const guard = new PostCompactionGuard({ windowSize: 3 }, { enabled: config.enabled });
 * guard.arm(); // after compacting and retrying
 * const seen = guard.observe({ toolName, argsHash: record.argsHash, resultHash: record.resultHash });
 * if (seen.shouldAbort) throw seen.error;
 * ```
 */
export class PostCompactionGuard {
  /** Calls watched after each compaction, and identical triples that abort. */
  readonly windowSize: number;
  /** Whether the guard runs at all. */
  readonly enabled: boolean;
  private remaining = 0;
  private readonly seen = new Map<string, number>();

  /**
   * @param config `windowSize` (default 3; a non-positive or non-integer value
   *   falls back to it) and an optional `enabled` that wins over the master switch.
   * @param options the loop-detection master switch.
   */
  constructor(config: Partial<PostCompactionGuardConfig> = {}, options: PostCompactionGuardOptions = {}) {
    const size = config.windowSize;
    this.windowSize =
      typeof size === "number" && Number.isInteger(size) && size > 0
        ? size
        : DEFAULT_LOOP_DETECTION_CONFIG.postCompactionGuard.windowSize;
    this.enabled = (config.enabled ?? options.enabled) !== false;
  }

  /** Whether the window is open. */
  get armed(): boolean {
    return this.remaining > 0;
  }

  /** Calls left in the open window (0 when disarmed). */
  get remainingAttempts(): number {
    return this.remaining;
  }

  /** Opens (or reopens, from empty) a window of `windowSize` calls. Does nothing when disabled. */
  arm(): void {
    if (!this.enabled) return;
    this.remaining = this.windowSize;
    this.seen.clear();
  }

  /** Closes the window. */
  disarm(): void {
    this.remaining = 0;
    this.seen.clear();
  }

  /** Counts one finished tool call against the open window. */
  observe(call: PostCompactionCall): PostCompactionObservation {
    if (this.remaining === 0) return { shouldAbort: false, armed: false, remainingAttempts: 0, count: 0 };
    let count = 0;
    if (call.resultHash !== undefined) {
      const key = JSON.stringify([call.toolName, call.argsHash, call.resultHash]);
      count = (this.seen.get(key) ?? 0) + 1;
      this.seen.set(key, count);
    }
    this.remaining--;
    if (count >= this.windowSize) {
      this.disarm();
      return {
        shouldAbort: true,
        armed: false,
        remainingAttempts: 0,
        count,
        error: new PostCompactionLoopPersistedError(call.toolName, count),
      };
    }
    if (this.remaining === 0) this.seen.clear();
    return { shouldAbort: false, armed: this.remaining > 0, remainingAttempts: this.remaining, count };
  }
}
