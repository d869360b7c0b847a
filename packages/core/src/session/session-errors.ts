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

/**
 * The file exists but is not a readable SQLite database (truncated, damaged
 * or not SQLite at all). Nothing was changed on disk.
 *
 * @example
 * ```ts
 * err.message; // "Session store '/app/.rein/sessions.db' is not a readable SQLite database (file is not a database). Nothing was changed: restore the file from a backup or move it aside, or pass another { path } to SessionStore."
 * ```
 */
export class SessionStoreCorruptError extends SessionStoreError {
  static {
    this.defineErrorName("SessionStoreCorruptError");
  }

  constructor(location: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      `Session store '${location}' is not a readable SQLite database (${reason}). ` +
        `Nothing was changed: restore the file from a backup or move it aside, or pass another { path } to SessionStore.`,
      location,
      { cause },
    );
  }
}

/**
 * The file is a valid SQLite database that Rein did not create (it has
 * tables but no Rein migration table). Rein never writes into it.
 *
 * @example
 * ```ts
 * err.tables; // ["users", "orders"]
 * ```
 */
export class ForeignDatabaseError extends SessionStoreError {
  static {
    this.defineErrorName("ForeignDatabaseError");
  }

  /** The tables found in the foreign database (first ten). */
  readonly tables: readonly string[];

  constructor(location: string, tables: readonly string[]) {
    super(
      `'${location}' is an SQLite database that was not created by Rein (tables: ${tables.join(", ")}). ` +
        `Nothing was changed: pass another { path } to SessionStore, e.g. '.rein/sessions.db'.`,
      location,
    );
    this.tables = tables;
  }
}

/**
 * The database was written by a newer Rein whose schema this build does not
 * know. It is left untouched.
 *
 * @example
 * ```ts
 * err.message; // "Session store 'a.db' has schema version 7, newer than version 1 supported by this @rein/core. Nothing was changed: upgrade @rein/core, or pass another { path } to SessionStore."
 * ```
 */
export class SessionSchemaVersionError extends SessionStoreError {
  static {
    this.defineErrorName("SessionSchemaVersionError");
  }

  /** Schema version found in the file. */
  readonly foundVersion: number;
  /** Highest schema version this build can read and write. */
  readonly supportedVersion: number;

  constructor(location: string, foundVersion: number, supportedVersion: number) {
    super(
      `Session store '${location}' has schema version ${foundVersion}, newer than version ${supportedVersion} supported by this @rein/core. ` +
        `Nothing was changed: upgrade @rein/core, or pass another { path } to SessionStore.`,
      location,
    );
    this.foundVersion = foundVersion;
    this.supportedVersion = supportedVersion;
  }
}

/**
 * A session id that the store does not hold.
 *
 * @example
 * ```ts
 * err.message; // "Session 's1' does not exist in session store 'a.db'. Create it with store.createSession('s1', { agentId }) or pick an id from store.listSessions()."
 * ```
 */
export class SessionNotFoundError extends SessionStoreError {
  static {
    this.defineErrorName("SessionNotFoundError");
  }

  /** The id that was asked for. */
  readonly sessionId: string;

  constructor(sessionId: string, location: string) {
    super(
      `Session '${sessionId}' does not exist in session store '${location}'. ` +
        `Create it with store.createSession('${sessionId}', { agentId }) or pick an id from store.listSessions().`,
      location,
    );
    this.sessionId = sessionId;
  }
}

/**
 * `createSession` was given an id that is already taken. The existing
 * session is left as it is.
 *
 * @example
 * ```ts
 * err.sessionId; // "s1"
 * ```
 */
export class SessionExistsError extends SessionStoreError {
  static {
    this.defineErrorName("SessionExistsError");
  }

  /** The id that is already taken. */
  readonly sessionId: string;

  constructor(sessionId: string, location: string) {
    super(
      `Session '${sessionId}' already exists in session store '${location}'. ` +
        `Continue it with store.getSession('${sessionId}'), or choose another id.`,
      location,
    );
    this.sessionId = sessionId;
  }
}

/**
 * A node id that is not in the session (for `setHead`, `update`, or a
 * history head).
 *
 * @example
 * ```ts
 * err.message; // "Node 'n9' does not exist in session 's1' (session store 'a.db'). Pick an id from writer.load().nodes or store.listBranches('s1')."
 * ```
 */
export class SessionNodeNotFoundError extends SessionStoreError {
  static {
    this.defineErrorName("SessionNodeNotFoundError");
  }

  /** The session that was searched. */
  readonly sessionId: string;
  /** The node id that was not found. */
  readonly nodeId: string;

  constructor(sessionId: string, nodeId: string, location: string) {
    super(
      `Node '${nodeId}' does not exist in session '${sessionId}' (session store '${location}'). ` +
        `Pick an id from writer.load().nodes or store.listBranches('${sessionId}').`,
      location,
    );
    this.sessionId = sessionId;
    this.nodeId = nodeId;
  }
}

/**
 * The store was used after `close()`.
 *
 * @example
 * ```ts
 * store.close(); store.listSessions(); // throws SessionStoreClosedError
 * ```
 */
export class SessionStoreClosedError extends SessionStoreError {
  static {
    this.defineErrorName("SessionStoreClosedError");
  }

  constructor(location: string) {
    super(`Session store '${location}' is closed. Open a new SessionStore({ path: '${location}' }) to use it again.`, location);
  }
}
