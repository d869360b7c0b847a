import { MaxStepsExceededError } from "@rein/guard";

/** How far one loop may count {@link Execution.steps}: up to `limit`, a budget of `size` requests. */
export interface StepBudget {
  readonly limit: number;
  readonly size: number;
}

/**
 * The state one run shares with every run nested inside it: the step
 * budget, the guard refusals and loop blocks seen so far, and the error
 * that aborted it. What each run used is kept by its own `RunLedger`. Created by the outermost loop and found by nested ones
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

  /**
   * Counts one model request against `budget`: the step budget of the loop
   * making it (see {@link StepBudget}). Exceeding it aborts the whole run.
   */
  step(budget: StepBudget): number {
    if (this.steps >= budget.limit) throw this.abort(new MaxStepsExceededError(budget.size));
    return ++this.steps;
  }

  /**
   * The step budget of a loop starting now with its runtime's `maxSteps`:
   * counted from this moment, and never beyond what the loop it runs in has
   * left (`parent`), so a nested runtime can only lower the budget, and only
   * while its loop runs.
   */
  budget(maxSteps: number, parent: StepBudget | undefined): StepBudget {
    const own = this.steps + maxSteps;
    if (parent !== undefined && parent.limit <= own) return parent;
    return { limit: own, size: maxSteps };
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
