import type { RunContext } from "./run-context";

/**
 * Keeps a resumable run's lease while the run runs: renews it every third
 * of `leaseMs`. On a store with `renewRunAsync` (the Postgres store's
 * `asyncWrites`) each renewal is awaited on the store's pool, one at a
 * time, so a stalled database never holds the event loop; elsewhere it is
 * the store's synchronous `renewRun`. A renewal the store refuses (another
 * worker holds the run now) marks the lease lost at once; renewals that
 * fail or stay unanswered for a whole lease mark it lost too, since another
 * worker may have taken the run meanwhile. Returns the function that stops
 * it (a renewal answered after that changes nothing).
 * @internal
 */
export function keepLease(run: RunContext, leaseMs: number): () => void {
  let renewedAt = Date.now();
  let inFlight = false;
  let stopped = false;
  const answered = (renewed: boolean): void => {
    if (stopped) return; // answered after the run released its lease
    if (renewed) renewedAt = Date.now();
    else run.leaseLost = true;
  };
  const unanswered = (): void => {
    if (!stopped && Date.now() - renewedAt >= leaseMs) run.leaseLost = true;
  };
  const timer = setInterval(() => {
    // The last renewal has not answered yet: it is the one that counts.
    if (inFlight) return unanswered();
    try {
      const renewed = run.renew(leaseMs);
      if (typeof renewed === "boolean") return answered(renewed);
      inFlight = true;
      renewed.then(answered, unanswered).finally(() => (inFlight = false));
    } catch {
      unanswered();
    }
  }, Math.max(1, Math.floor(leaseMs / 3)));
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
