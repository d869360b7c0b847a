import { ToolTimeoutError, type ReachRun } from "@rein/guard";
import { joinSignals, raceSignal } from "./cancellation";

/** The longest delay `setTimeout` keeps: a longer one fires at once. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * How long one call the run waits on may take — a tool call or a model
 * request: the run's reach deadline, or a tool's own `timeout` when that
 * comes first. Then {@link signal} fires — with a `ToolTimeoutError` (the
 * tool call fails, the model is told), or with the deadline's
 * `ReachExceededError`, which ends the run ({@link endsRun}): nothing in
 * flight when the deadline passes holds the run past it.
 * @internal
 */
export class CallLimit {
  readonly #controller = new AbortController();
  readonly #timer: NodeJS.Timeout | undefined;
  /** Set when the reach deadline fired: the error the run ends with. */
  #deadlineError: unknown;

  private constructor(ms: number, reason: () => unknown, ending: boolean) {
    const fire = (): void => {
      const error = reason();
      if (ending) this.#deadlineError = error;
      this.#controller.abort(error);
    };
    // A deadline already past stops the call before it starts.
    if (ms <= 0) fire();
    else this.#timer = setTimeout(fire, ms);
  }

  /** The limit of a call of `toolName`, or undefined when it has neither a timeout nor a deadline to keep. */
  static ofTool(toolName: string, timeoutMs: number | undefined, reach: ReachRun | undefined, now = Date.now()): CallLimit | undefined {
    const leftMs = reach === undefined ? Infinity : reach.deadline - now;
    if (timeoutMs !== undefined && timeoutMs <= leftMs) return new CallLimit(timeoutMs, () => new ToolTimeoutError(toolName, timeoutMs), false);
    return CallLimit.ofDeadline(reach, now);
  }

  /** The reach deadline alone (a model request: its provider keeps its own timeout), or undefined when there is none to keep. */
  static ofDeadline(reach: ReachRun | undefined, now = Date.now()): CallLimit | undefined {
    const leftMs = reach === undefined ? Infinity : reach.deadline - now;
    return leftMs > MAX_TIMER_MS ? undefined : new CallLimit(leftMs, () => reach!.deadlineError(), true);
  }

  /** Fires at the limit (the call's signal joins it). */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** True for the error the reach deadline aborted the call with: the run is over, not just the call. */
  endsRun(error: unknown): boolean {
    return this.#deadlineError !== undefined && error === this.#deadlineError;
  }

  /** Stops the timer (the call has settled). */
  dispose(): void {
    clearTimeout(this.#timer);
  }
}

/**
 * Settles like `work` — a wait of the run that is no call of its own (a
 * Context provider rendering, a stream consumer making room) — or rejects
 * when the run's `signal` fires or its reach deadline passes, with the
 * deadline's `ReachExceededError`: such a wait cannot hold the run past it.
 * @internal
 */
export async function raceRunLimits<T>(work: Promise<T>, signal: AbortSignal | undefined, reach: ReachRun | undefined): Promise<T> {
  const deadline = CallLimit.ofDeadline(reach);
  try {
    return await raceSignal(work, joinSignals(signal, deadline?.signal));
  } finally {
    deadline?.dispose();
  }
}
