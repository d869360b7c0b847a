/**
 * The options of the SQLite `SessionStore` and their schema, in one file:
 * session-store.ts imports both, and nothing here imports back.
 */
import { boolean, nonEmptyString, optionsSchema, rule } from "./options/option-schema";

/**
 * Options of `SessionStore`.
 * @example
 * ```ts
 * new SessionStore({ path: ":memory:" });
 * new SessionStore({ path: "runs/sessions.db", shutdownFlush: false });
 * ```
 */
export interface SessionStoreOptions {
  /**
   * The database file (its directory is created), or `":memory:"`.
   * @default ".rein/sessions.db" under process.cwd()
   */
  path?: string;
  /**
   * Commit pending writes and mark running nodes interrupted on SIGINT,
   * SIGTERM and `process.exit` (see `installShutdownFlush`).
   * @default true for a file, false for ":memory:"
   */
  shutdownFlush?: boolean;
  /**
   * Milliseconds `SessionStore.commitWithRetry` keeps retrying while
   * another connection holds the write lock, without blocking the event
   * loop. A synchronous call (`createSession`, `setHead`, `commit`, …) waits
   * one short attempt (at most `BUSY_ATTEMPT_MS`) and then throws
   * `SessionStoreBusyError`. Opening the store (the constructor, which is
   * synchronous) waits up to this long for each step that needs the lock
   * (reading the schema, switching to WAL, migrating), blocking while it
   * waits: several processes opening one new file wait for the one creating
   * its schema.
   * @default 5000
   */
  busyTimeoutMs?: number;
}

/** {@link SessionStoreOptions}: the `SessionStore` constructor. */
export const sessionStoreOptionsSchema = optionsSchema<SessionStoreOptions>("SessionStore", {
  path: nonEmptyString,
  shutdownFlush: boolean,
  busyTimeoutMs: rule(
    "a non-negative number of milliseconds",
    (value) => typeof value === "number" && Number.isFinite(value) && value >= 0,
    "number",
  ),
});
