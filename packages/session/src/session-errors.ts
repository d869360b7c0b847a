import { SystemFailureError } from "@rein/guard";
import { dirname } from "node:path";
import { userInfo } from "node:os";

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

/**
 * Another connection (this process or another one) held the database's
 * write lock for longer than the store waits. Nothing was written; the
 * store keeps working, so the same call can simply be retried.
 *
 * @example
 * ```ts
 * err.message; // "Session store 'a.db' is locked by another connection: gave up after 20 ms. Nothing was written; retry later (SessionStore.commitWithRetry waits up to { busyTimeoutMs } without blocking), or find the process that keeps 'a.db' locked."
 * ```
 */
export class SessionStoreBusyError extends SessionStoreError {
  static {
    this.defineErrorName("SessionStoreBusyError");
  }

  /** How long the store waited for the lock, in milliseconds. */
  readonly waitedMs: number;

  constructor(location: string, waitedMs: number, options?: { cause?: unknown }) {
    super(
      `Session store '${location}' is locked by another connection: gave up after ${Math.round(waitedMs)} ms. ` +
        `Nothing was written; retry later (SessionStore.commitWithRetry waits up to { busyTimeoutMs } without blocking), ` +
        `or find the process that keeps '${location}' locked.`,
      location,
      options,
    );
    this.waitedMs = waitedMs;
  }
}

/**
 * The database file, or the directory that holds it, cannot be written by
 * this process (permissions, a read-only mount). SQLite needs to write
 * both: the file, and its `-wal` / `-shm` companions beside it.
 *
 * @example
 * ```ts
 * err.target; // "directory"
 * ```
 */
export class SessionStoreReadOnlyError extends SessionStoreError {
  static {
    this.defineErrorName("SessionStoreReadOnlyError");
  }

  /** What cannot be written: the database `"file"` or its `"directory"`. */
  readonly target: "file" | "directory";

  constructor(location: string, target: "file" | "directory", reason: string, options?: { cause?: unknown }) {
    const what = target === "file" ? `the file '${location}'` : `its directory '${dirname(location)}'`;
    super(
      `Session store '${location}' cannot be written: ${what} is read-only for this process (${reason}). ` +
        `Nothing was written: make ${target === "file" ? "the file" : "the directory"} writable by user ${userName()}, or pass another { path } to SessionStore.`,
      location,
      options,
    );
    this.target = target;
  }
}

/**
 * The directory for the database cannot be made or opened: a parent path is
 * a file, or this process may not create it.
 *
 * @example
 * ```ts
 * err.message; // "Cannot create the directory of session store '/app/data/sessions.db': '/app/data' is a file (EEXIST). Move that file aside, or pass another { path } to SessionStore."
 * ```
 */
export class SessionStoreDirectoryError extends SessionStoreError {
  static {
    this.defineErrorName("SessionStoreDirectoryError");
  }

  /** The system error code (`ENOTDIR`, `EEXIST`, `EACCES`, `EPERM`, `EROFS`, …). */
  readonly code: string;

  constructor(location: string, problem: string, code: string, options?: { cause?: unknown }) {
    const remedy =
      code === "EACCES" || code === "EPERM" || code === "EROFS"
        ? `create it beforehand with access for user ${userName()}`
        : "move that file aside";
    super(
      `Cannot create the directory of session store '${location}': ${problem} (${code}). ` +
        `Nothing was written: ${remedy}, or pass another { path } to SessionStore.`,
      location,
      options,
    );
    this.code = code;
  }
}

/**
 * The disk (or the file system's quota) is full. The transaction was rolled
 * back and nothing of it was stored; the store keeps working, and a writer
 * keeps its batch, so the same writes commit once space is freed.
 *
 * @example
 * ```ts
 * err.message; // "Session store 'a.db' could not write: the disk is full. Nothing of this commit was stored and the batch is kept: free space on the disk that holds 'a.db', then retry."
 * ```
 */
export class SessionStoreDiskFullError extends SessionStoreError {
  static {
    this.defineErrorName("SessionStoreDiskFullError");
  }

  constructor(location: string, options?: { cause?: unknown }) {
    super(
      `Session store '${location}' could not write: the disk is full. ` +
        `Nothing of this commit was stored and the batch is kept: free space on the disk that holds '${location}', then retry.`,
      location,
      options,
    );
  }
}

/**
 * A commit appended a node under an id that another, different node of the
 * session already has. Nothing of the commit was stored. (The same node sent
 * again — same role, name, caller, predecessor and creation time — is
 * harmless and ignored.)
 *
 * @example
 * ```ts
 * err.nodeId; // "n1"
 * ```
 */
export class SessionNodeConflictError extends SessionStoreError {
  static {
    this.defineErrorName("SessionNodeConflictError");
  }

  /** The session written to. */
  readonly sessionId: string;
  /** The id both nodes have. */
  readonly nodeId: string;

  constructor(sessionId: string, nodeId: string, location: string) {
    super(
      `Node id '${nodeId}' is already taken by another node in session '${sessionId}' (session store '${location}'). ` +
        `Nothing of this commit was stored: give each node its own id (the runtime uses 128-bit random ids).`,
      location,
    );
    this.sessionId = sessionId;
    this.nodeId = nodeId;
  }
}

/**
 * A write of a resumable run was made under a lease this worker no longer
 * holds: the run's lease moved on to another epoch (another worker claimed
 * the run after this worker's lease expired, say while its event loop was
 * blocked). The store checked the epoch in the same transaction as the
 * write and refused the whole write: nothing of it was stored, and what the
 * run's current holder wrote stands. Stop this attempt; do not retry the
 * write. The holder finishes the run (`store.getRun(runId)` shows it).
 *
 * @example
 * ```ts
 * try { await pipeline.process(url); } catch (error) {
 *   if (LeaseLostError.isInstance(error)) console.warn(`run ${error.runId} went on in another worker (epoch ${error.currentEpoch})`);
 * }
 * ```
 */
export class LeaseLostError extends SessionStoreError {
  static {
    this.defineErrorName("LeaseLostError");
  }

  /** The run whose write was refused. */
  readonly runId: string;
  /** The lease epoch the refused write was made under (the one this worker holds). */
  readonly heldEpoch: number;
  /** The run's lease epoch in the store when the write was refused; null when the store holds no such run (deleted with its session). */
  readonly currentEpoch: number | null;

  constructor(runId: string, heldEpoch: number, currentEpoch: number | null, location: string) {
    const now =
      currentEpoch === null
        ? `session store '${location}' holds no run '${runId}' any more (deleted with its session?)`
        : `run '${runId}' is at lease epoch ${currentEpoch} in session store '${location}' (another worker claimed it after this worker's lease expired)`;
    super(
      `This worker lost the lease of run '${runId}': it wrote under lease epoch ${heldEpoch}, but ${now}. ` +
        `Nothing of this write was stored: stop this attempt and leave the run to its current holder (store.getRun('${runId}')); ` +
        `if steps outlive their lease, raise resumable.leaseMs above the longest synchronous stretch of a step.`,
      location,
    );
    this.runId = runId;
    this.heldEpoch = heldEpoch;
    this.currentEpoch = currentEpoch;
  }
}

function userName(): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  try {
    const name = userInfo().username;
    return uid === undefined ? name : `${name} (uid ${uid})`;
  } catch {
    return uid === undefined ? "of this process" : `uid ${uid}`;
  }
}
