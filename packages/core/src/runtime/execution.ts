import { MaxStepsExceededError } from "../errors/core-errors";

/**
 * The state one run shares with every run nested inside it: the step
 * budget, the guard refusals and loop blocks seen so far, and the error
 * that aborted it. Created by the outermost loop and found by nested ones
 * through the call scope. Settings are NOT shared: each loop resolves its
 * own agent's (see `LoopSettings`).
 */
export class Execution {
  /** Model requests made so far by this run and its nested runs. */
  steps = 0;
  /** Guard refusals reported to the model so far. */
  refusals = 0;
  /** Tool calls blocked by loop detection so far. */
  blockedCalls = 0;
  /** True once the run was aborted; {@link abortError} then holds why (which may be any value). */
  aborted = false;
  /** Why the run was aborted; nested loops rethrow it instead of reporting it to the model. */
  abortError: unknown = undefined;

  constructor(
    /** Model requests allowed to the run and its nested runs; a nested runtime can only lower it. */
    public maxSteps: number,
  ) {}

  /** Lowers the shared budget to `maxSteps` when that is smaller (a nested runtime's own limit). */
  limitSteps(maxSteps: number): void {
    if (maxSteps < this.maxSteps) this.maxSteps = maxSteps;
  }

  /** Counts one model request against the shared budget. */
  step(): number {
    if (this.steps >= this.maxSteps) throw this.abort(new MaxStepsExceededError(this.maxSteps));
    return ++this.steps;
  }

  /** Marks the run aborted by `error` (the first abort wins) and returns it. */
  abort<E>(error: E): E {
    if (!this.aborted) {
      this.aborted = true;
      this.abortError = error;
    }
    return error;
  }

  /** Whether `error` is the one that aborted the run. */
  isAbortError(error: unknown): boolean {
    return this.aborted && error === this.abortError;
  }
}
