/**
 * What {@link keepLease} keeps: a run's lease, renewed through the store
 * (synchronously, or awaited on a store with `asyncLeases`), and the flag
 * that says it is lost. Core's resumable run is one.
 */
export interface RenewableLease {
  /** Renews the lease for `leaseMs`; false when another worker holds the run now. */
  renew(leaseMs: number): boolean | Promise<boolean>;
  /** Set once the lease is lost: the run stops at its next save point. */
  leaseLost: boolean;
}

/**
 * Keeps a resumable run's lease while it runs, renewing it every third of
 * `leaseMs`: on the store's pool when it has `asyncLeases` (one renewal in
 * flight at a time, so a stalled database never holds the event loop), else
 * with `renewRun`. A refused renewal (another worker holds the run now)
 * marks the lease lost at once; renewals failing or unanswered for a whole
 * lease mark it lost too. Returns the function that stops it (a renewal
 * answered after that changes nothing).
 * @example
 * ```ts
 * const stop = keepLease(run, 30_000);
 * try { await body(); } finally { stop(); }
 * ```
 */
export function keepLease(run: RenewableLease, leaseMs: number): () => void {
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
