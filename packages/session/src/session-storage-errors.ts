/**
 * The faults of a store's storage, whose fault is neither the caller's nor
 * the session's: a file that is not a database or not Rein's, a newer
 * schema, a lock held elsewhere, no permission, no directory, no space.
 */
import { dirname } from "node:path";
import { userInfo } from "node:os";
import { SessionStoreError } from "./session-store-error";

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

function userName(): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  try {
    const name = userInfo().username;
    return uid === undefined ? name : `${name} (uid ${uid})`;
  } catch {
    return uid === undefined ? "of this process" : `uid ${uid}`;
  }
}
