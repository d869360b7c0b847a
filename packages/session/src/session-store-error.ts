import { SystemFailureError } from "@rein/guard";

/**
 * Base of every session-store failure: a system failure
 * ({@link SystemFailureError}: the file, the database, a missing record),
 * not the model's fault. `location` names the database file (or
 * `":memory:"` / `"in-memory store"`).
 *
 * @example
 * ```ts
 * try { store.getSession("s1"); } catch (error) {
 *   if (SessionStoreError.isInstance(error)) console.error(error.location);
 * }
 * ```
 */
export class SessionStoreError extends SystemFailureError {
  static {
    this.defineErrorName("SessionStoreError");
  }

  /** The database file path, or a description of an in-memory store. */
  readonly location: string;

  constructor(message: string, location: string, options?: { cause?: unknown }) {
    super(message, options);
    this.location = location;
  }
}
