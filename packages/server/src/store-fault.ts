import {
  SessionExistsError,
  SessionNodeConflictError,
  SessionNodeNotFoundError,
  SessionNotFoundError,
  SessionStoreError,
} from "rein";
import { RequestError } from "./http-error";

/** The message of every 503 `store_unavailable`: the store's own message names files, hosts, ports and schemas, so it is logged, never sent. */
export const STORE_UNAVAILABLE = "the session store is unavailable; retry later";

/**
 * @internal True when `error`, or an error it was caused by (8 levels),
 * is a session-store failure other than a missing or conflicting record:
 * the database is down, busy, closed, full, read-only or not Rein's.
 */
export function isStoreFault(error: unknown): boolean {
  let current: unknown = error;
  for (let level = 0; level < 8 && current !== undefined && current !== null; level++) {
    if (SessionStoreError.isInstance(current)) {
      const record = [SessionNotFoundError, SessionExistsError, SessionNodeNotFoundError, SessionNodeConflictError].some((type) => type.isInstance(current));
      return !record;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * @internal Runs a route's own store call: whatever it throws is a 503
 * `store_unavailable` whose message names nothing of the store (the error
 * itself goes to `report`).
 */
export async function fromStore<R>(report: (error: unknown) => void, read: () => R | Promise<R>): Promise<R> {
  try {
    return await read();
  } catch (error) {
    report(error);
    throw new RequestError("store_unavailable", STORE_UNAVAILABLE);
  }
}
