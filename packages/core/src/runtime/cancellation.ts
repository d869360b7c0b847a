import { CancelledError, InterruptedError, describeError } from "@rein/guard";
import type { SessionNodeWriter } from "@rein/session";

/**
 * True for errors that mean "stopped on purpose": `CancelledError`, and
 * anything named `AbortError` or `TimeoutError` (what `AbortController` and
 * `AbortSignal.timeout` raise). Checked by name, never with `instanceof
 * Error`: an abort reason can be a `DOMException` from another realm.
 */
export function isCancellation(error: unknown): boolean {
  if (CancelledError.isInstance(error)) return true;
  if (typeof error !== "object" || error === null) return false;
  const name = (error as { name?: unknown }).name;
  return name === "AbortError" || name === "TimeoutError";
}

/**
 * What a run rejects with when its signal fired: the signal's reason when
 * it is an error object (an `AbortError`, a `TimeoutError`, a tool timeout),
 * else a {@link CancelledError} carrying the reason as its cause.
 */
export function abortReason(signal: AbortSignal): unknown {
  const reason: unknown = signal.reason;
  if (typeof reason === "object" && reason !== null && typeof (reason as { message?: unknown }).message === "string") return reason;
  return new CancelledError("the run was cancelled: its AbortSignal fired", { cause: reason });
}

const ignore = (): void => {};

/**
 * Settles like `work`, or rejects with the abort reason as soon as
 * `signal` fires, whichever comes first: a provider or tool that ignores
 * the signal cannot keep a cancelled run pending. The abandoned work's
 * eventual rejection is swallowed (it already lost the race).
 */
export function raceSignal<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  if (signal.aborted) {
    work.catch(ignore);
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const stop = onAbort(signal, () => {
      work.catch(ignore);
      reject(abortReason(signal));
    });
    work.then(
      (value) => {
        stop();
        resolve(value);
      },
      (error: unknown) => {
        stop();
        reject(error);
      },
    );
  });
}

/** Callbacks waiting on each signal: one native listener per signal, however many runs share it. */
const waiting = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `callback` once when `signal` fires; returns a function that stops
 * waiting. Many concurrent runs on one long-lived signal (a server's
 * shutdown signal) share one listener on it, so Node never warns of a
 * listener leak.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let callbacks = waiting.get(signal);
  if (callbacks === undefined) {
    const registered = new Set<() => void>();
    callbacks = registered;
    waiting.set(signal, registered);
    signal.addEventListener(
      "abort",
      () => {
        waiting.delete(signal);
        for (const waiter of registered) waiter();
      },
      { once: true },
    );
  }
  const own = callbacks;
  own.add(callback);
  return () => {
    own.delete(callback);
  };
}

/** One signal that fires when either does (undefined when neither exists). */
export function joinSignals(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  if (a === undefined || a === b) return b;
  if (b === undefined) return a;
  return AbortSignal.any([a, b]);
}

/**
 * The recorded calls running under one signal. When the signal fires,
 * every node still open is marked `cancelled` at once (its body may ignore
 * the signal and never return), and from then on nothing under the signal
 * is written: late writes of abandoned work are dropped.
 * @internal
 */
export class CancellationRegion {
  private readonly open = new Map<string, SessionNodeWriter>();
  private cancelled = false;
  private readonly stop: () => void;

  constructor(readonly signal: AbortSignal) {
    if (signal.aborted) {
      this.cancelled = true;
      this.stop = ignore;
      return;
    }
    this.stop = onAbort(signal, () => this.cancelOpenNodes());
  }

  /**
   * True once the region was cancelled while its work ran: writes under it
   * are dropped from then on. A signal that fires after the region was
   * disposed (the run had ended) cancels nothing, and detached work that
   * outlived the run records as usual.
   */
  get closed(): boolean {
    return this.cancelled;
  }

  opened(writer: SessionNodeWriter, nodeId: string): void {
    this.open.set(nodeId, writer);
  }

  closedNode(nodeId: string): void {
    this.open.delete(nodeId);
  }

  /** Stops listening (the work under the region has finished). Open nodes stay tracked. */
  dispose(): void {
    this.stop();
  }

  private cancelOpenNodes(): void {
    this.cancelled = true;
    const reason = abortReason(this.signal);
    const error = describeError(reason);
    // A host going away interrupts (resumable, as after a crash); anything else cancels.
    const status = InterruptedError.isInstance(reason) ? "interrupted" : "cancelled";
    const writers = new Set<SessionNodeWriter>();
    for (const [nodeId, writer] of this.open) {
      try {
        writer.update(nodeId, { metadata: { status, error } });
        writers.add(writer);
      } catch {
        // A node the store cannot update is left for the store's own recovery (interrupted on reopen).
      }
    }
    this.open.clear();
    for (const writer of writers) {
      try {
        writer.flush();
      } catch {
        // Reported by the writer's next flush.
      }
    }
  }
}
