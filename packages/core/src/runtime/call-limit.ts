import { ToolTimeoutError, type ReachRun } from "@rein/guard";
import { onAbort, raceSignal } from "./cancellation";

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
  /** Stops waiting on the run's signal. */
  readonly #leaveParent: (() => void) | undefined;
  /** Set when the reach deadline fired: the error the run ends with. */
  #deadlineError: unknown;

  private constructor(ms: number, reason: () => unknown, ending: boolean, parent: AbortSignal | undefined) {
    // The run's own signal comes first, as it would in AbortSignal.any([run, limit]).
    if (parent?.aborted === true) this.#controller.abort(parent.reason);
    else if (parent !== undefined) this.#leaveParent = onAbort(parent, () => this.#controller.abort(parent.reason));
    const fire = (): void => {
      if (this.#controller.signal.aborted) return;
      const error = reason();
      if (ending) this.#deadlineError = error;
      this.#controller.abort(error);
    };
    // A deadline already past stops the call before it starts.
    if (ms <= 0) fire();
    else if (!this.#controller.signal.aborted) this.#timer = setTimeout(fire, ms);
  }

  /**
   * The limit of a call of `toolName` made under `signal` (the run's), or
   * undefined when it has neither a timeout nor a deadline to keep.
   */
  static ofTool(toolName: string, timeoutMs: number | undefined, reach: ReachRun | undefined, signal: AbortSignal | undefined, now = Date.now()): CallLimit | undefined {
    const leftMs = reach === undefined ? Infinity : reach.deadline - now;
    if (timeoutMs !== undefined && timeoutMs <= leftMs) return new CallLimit(timeoutMs, () => new ToolTimeoutError(toolName, timeoutMs), false, signal);
    return CallLimit.ofDeadline(reach, signal, now);
  }

  /**
   * The reach deadline alone (a model request: its provider keeps its own
   * timeout) for a call made under `signal`, or undefined when there is no
   * deadline to keep.
   */
  static ofDeadline(reach: ReachRun | undefined, signal: AbortSignal | undefined, now = Date.now()): CallLimit | undefined {
    const leftMs = reach === undefined ? Infinity : reach.deadline - now;
    return leftMs > MAX_TIMER_MS ? undefined : new CallLimit(leftMs, () => reach!.deadlineError(), true, signal);
  }

  /**
   * The call's signal: fires when the run's signal does or at the limit.
   * Joined through `onAbort` (one shared listener per run signal), which
   * {@link dispose} leaves — not `AbortSignal.any`, which on Node 20 leaves
   * an entry on a long-lived run signal for every call (200,000 after
   * 200,000 calls).
   */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** True for the error the reach deadline aborted the call with: the run is over, not just the call. */
  endsRun(error: unknown): boolean {
    return this.#deadlineError !== undefined && error === this.#deadlineError;
  }

  /** Stops the timer and leaves the run's signal (the call has settled). */
  dispose(): void {
    clearTimeout(this.#timer);
    this.#leaveParent?.();
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
  const deadline = CallLimit.ofDeadline(reach, signal);
  try {
    return await raceSignal(work, deadline?.signal ?? signal);
  } finally {
    deadline?.dispose();
  }
}
