import type { ToolLoopDetector } from "@rein/guard";
import type { Logger } from "pino";
import { MaxStepsExceededError } from "../errors/core-errors";
import type { RuntimeEvent, RuntimeEventListener } from "./runtime-events";

/**
 * The state one run shares with every run nested inside it: the step
 * budget, the guard refusals seen so far and the error that aborted it.
 * Created by the outermost `exec` (or `ask`) and found by nested ones
 * through the call scope.
 */
export class Execution {
  /** Model requests made so far by this run and its nested runs. */
  steps = 0;
  /** Guard refusals reported to the model so far. */
  refusals = 0;
  /** Set when the run was aborted; nested loops rethrow it instead of reporting it to the model. */
  abortError: unknown = undefined;
  /** Tool calls blocked by loop detection so far. */
  blockedCalls = 0;
  /** The run's tool-loop detector (one window per loop), created when detection is on. */
  loopDetector: ToolLoopDetector | undefined;

  constructor(
    readonly maxSteps: number,
    readonly logger: Logger,
    private readonly listener: RuntimeEventListener | undefined,
    /** The outermost run's signal: aborting it stops every nested run too. */
    readonly signal: AbortSignal | undefined,
  ) {}

  /** Counts one model request against the shared budget. */
  step(): number {
    if (this.steps >= this.maxSteps) throw this.abort(new MaxStepsExceededError(this.maxSteps));
    return ++this.steps;
  }

  /** Marks the run aborted by `error` and returns it. */
  abort<E>(error: E): E {
    this.abortError ??= error;
    return error;
  }

  emit(event: RuntimeEvent): void {
    if (this.listener === undefined) return;
    try {
      this.listener(event);
    } catch (error) {
      this.logger.warn({ err: error, event: event.type }, "onEvent listener threw; ignored");
    }
  }
}
