import { SessionStoreBusyError } from "./session-errors";

/** Something to sleep on between lease-write attempts (never notified). */
const LOCK_PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * Runs `write` again while it fails with {@link SessionStoreBusyError} (another
 * connection holds the write lock), sleeping 1, 2, 4 … 20 ms between
 * attempts, until `busyTimeoutMs` has passed; then, or on any other error,
 * throws what the last attempt threw. Synchronous: the SQLite store's
 * lease writes and `consumeOnce` wait this way.
 * @internal
 */
export function writeThroughLocks<R>(busyTimeoutMs: number, write: () => R): R {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return write();
    } catch (error) {
      if (!(error instanceof SessionStoreBusyError) || Date.now() - started >= busyTimeoutMs) throw error;
      Atomics.wait(LOCK_PAUSE, 0, 0, Math.min(20, 2 ** attempt));
    }
  }
}

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/**
 * Runs `attempt` again while it rejects with {@link SessionStoreBusyError},
 * backing off 2, 4, 8 … 50 ms (with jitter) without blocking the event loop,
 * until `busyTimeoutMs` has passed; then rejects with a
 * {@link SessionStoreBusyError} for `location` that says how long it waited.
 * Any other error rejects at once. `attempt` maps its own failures to the
 * store's typed errors. The SQLite store's `commitWithRetry` waits this way.
 * @internal
 */
export async function retryThroughLocks<R>(busyTimeoutMs: number, location: string, attempt: () => Promise<R>): Promise<R> {
  const started = Date.now();
  for (let tries = 0; ; tries++) {
    try {
      return await attempt();
    } catch (fault) {
      const waited = Date.now() - started;
      if (!(fault instanceof SessionStoreBusyError)) throw fault;
      if (waited >= busyTimeoutMs) throw new SessionStoreBusyError(location, waited, { cause: fault.cause });
      const backoff = Math.min(50, 2 ** (tries + 1)) * (0.5 + Math.random() / 2);
      await sleep(Math.min(backoff, busyTimeoutMs - waited));
    }
  }
}
