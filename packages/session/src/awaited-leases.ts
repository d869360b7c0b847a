import type { RunLeaseAsyncCalls, RunLeaseStore } from "./run-leases";

/** Every lease call of a {@link RunLeaseStore}, awaited. */
export type AwaitedLeaseCalls = Required<RunLeaseAsyncCalls>;

/**
 * The lease calls of `store`, each awaited: on its `asyncLeases` when it
 * has them (the Postgres store's `asyncWrites`: a slow or stalled database
 * holds the caller, never the event loop), the synchronous method for any
 * call they lack (a store written before `claimRun` was one of them) and on
 * a store without them.
 * @example
 * ```ts
 * if (await awaitedLeases(store).claimRun(runId, ["interrupted"], 30_000, seen.leaseEpoch)) resume();
 * ```
 */
export function awaitedLeases(store: RunLeaseStore): AwaitedLeaseCalls {
  const calls = store.asyncLeases;
  const pick = <K extends keyof RunLeaseAsyncCalls>(name: K): AwaitedLeaseCalls[K] => {
    const awaited = calls?.[name];
    if (awaited !== undefined) return awaited.bind(calls) as AwaitedLeaseCalls[K];
    const sync = store[name] as (...args: unknown[]) => unknown;
    return (async (...args: unknown[]) => sync.apply(store, args)) as unknown as AwaitedLeaseCalls[K];
  };
  return { registerRun: pick("registerRun"), claimRun: pick("claimRun"), renewRun: pick("renewRun"), releaseRun: pick("releaseRun"), getRun: pick("getRun"), listRuns: pick("listRuns") };
}
