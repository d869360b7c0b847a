import type { SessionStoreLike } from "@rein/session";
import type { CodeChangePolicy } from "./resumable-options";

/**
 * Options of `resumeRun` and `agent.resumeRun`.
 * @example
 * ```ts
 * await resumeRun(runId, { codeChangePolicy: "use_latest" });
 * ```
 */
export interface ResumeRunOptions {
  /** Overrides the method's `resumable.codeChangePolicy` for this resume. @default the method's, else "keep_original" */
  codeChangePolicy?: CodeChangePolicy;
}

/**
 * Options of `resumeInterrupted`.
 * @example
 * ```ts
 * await resumeInterrupted({ store });
 * ```
 */
export interface ResumeInterruptedOptions {
  /** The store whose runs to continue. @default the stores of this process's agents with resumable methods */
  store?: SessionStoreLike;
  /** Only runs whose last sign of life is at most this old (ms) continue. @default 7200000 (2 hours) */
  withinMs?: number;
}

/** A run `resumeInterrupted` continued, and how it ended. */
export interface ResumedRun {
  /** The run's id (its node id). */
  readonly runId: string;
  /** The resumable method (`Pipeline.process`). */
  readonly name: string;
  readonly status: "completed" | "paused" | "error";
  /** The method's result, when completed. */
  readonly result?: unknown;
  /** Why it paused or failed. */
  readonly error?: unknown;
}

/** Why `resumeInterrupted` left a run alone. */
export type LeftAloneReason = "paused" | "cancelled" | "external" | "approval" | "too-old" | "no-agent" | "running-elsewhere" | "error";

/** A run `resumeInterrupted` did not continue, and why. */
export interface LeftAloneRun {
  /** The run's id (its node id). */
  readonly runId: string;
  /** The resumable method (`Pipeline.process`). */
  readonly name: string;
  /** Why it was left alone. */
  readonly reason: LeftAloneReason;
  /** What to do about it, in a sentence (which step, which call to make). */
  readonly message: string;
}

/** What `resumeInterrupted` did. */
export interface ResumeInterruptedReport {
  readonly resumed: ResumedRun[];
  readonly leftAlone: LeftAloneRun[];
}
