import { ReinError, UsageError } from "@rein/guard";

/**
 * A step's input (its arguments) or its result is not plain JSON, so it
 * cannot be saved and given back on resume. Thrown before the step runs for
 * the input, and instead of the result for the result.
 * @example
 * ```ts
 * await step("load", (when: Date) => load(when), new Date()); // StepValueError: input … at [0] is a Date
 * ```
 */
export class StepValueError extends UsageError {
  static {
    this.defineErrorName("StepValueError");
  }

  /** The step (or resumable method) whose value is refused. */
  readonly step: string;
  /** Which value: the arguments or the result. */
  readonly which: "input" | "result";
  /** Where inside the value, e.g. `[0].when`. */
  readonly path: string;

  constructor(step: string, which: "input" | "result", path: string, problem: string) {
    super(
      `the ${which} of step "${step}" is not plain JSON: ${path === "" ? "the value" : path} ${problem}; ` +
        `a resumable step saves its ${which} as JSON — pass plain data (strings, numbers, booleans, null, arrays, plain objects)`,
    );
    this.step = step;
    this.which = which;
    this.path = path;
  }
}

/** Why a run waits for `resumeRun` instead of going on. */
export type RunPauseKind = "pause" | "incompatible" | "code-changed" | "external" | "approval" | "cancelled" | "lease-lost";

/**
 * The run stopped and stays `paused` (its node too) until `resumeRun`: an
 * explicit pause, finished steps that no longer match the code (removed,
 * reordered, input changed), or a code change the policy does not accept.
 * The message names the step or function. Kind `"lease-lost"`: this
 * worker lost the run's lease to another worker, which runs it now; the
 * attempt stopped without recording its result (`cause` is the
 * `LeaseLostError` when the store refused one of its writes).
 * @example
 * ```ts
 * try { await pipeline.resumeRun(runId); } catch (error) {
 *   if (RunPausedError.isInstance(error)) console.log(error.step, error.message);
 * }
 * ```
 */
export class RunPausedError extends ReinError {
  static {
    this.defineErrorName("RunPausedError");
  }

  /** The run (its code node id). */
  readonly runId: string;
  readonly kind: RunPauseKind;
  /** The first step concerned, when one is. */
  readonly step: string | undefined;

  constructor(runId: string, kind: RunPauseKind, message: string, step?: string, options?: { cause?: unknown }) {
    super(`run ${runId} is paused: ${message}`, options);
    this.runId = runId;
    this.kind = kind;
    this.step = step;
  }
}

/**
 * `resumeRun` named a run that this process cannot take: unknown, already
 * finished, or running in another live worker (its lease holds).
 * @example
 * ```ts
 * await resumeRun("unknown-id"); // RunNotResumableError: no resumable run …
 * ```
 */
export class RunNotResumableError extends UsageError {
  static {
    this.defineErrorName("RunNotResumableError");
  }

  readonly runId: string;

  constructor(runId: string, message: string) {
    super(message);
    this.runId = runId;
  }
}
