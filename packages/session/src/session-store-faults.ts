import { accessSync, constants, existsSync, mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import {
  ForeignDatabaseError,
  LeaseLostError,
  SessionExistsError,
  SessionNodeConflictError,
  SessionNodeNotFoundError,
  SessionNotFoundError,
  SessionSchemaVersionError,
  SessionStoreBusyError,
  SessionStoreClosedError,
  SessionStoreCorruptError,
  SessionStoreDirectoryError,
  SessionStoreDiskFullError,
  SessionStoreError,
  SessionStoreReadOnlyError,
} from "./session-errors";
import { SqliteCallFailure, SqliteWorkerGone } from "./sqlite-connection";
import type { SqliteFailure } from "./sqlite-session-worker";

/**
 * How the SQLite store turns what went wrong into a typed
 * {@link SessionStoreError} whose message says what to do: the worker's
 * reports, and the making of the database's directory.
 */

/** Creates the directory of the database at `location`; a file in the way or a missing permission is a {@link SessionStoreDirectoryError}. @internal */
export function makeStoreDirectory(location: string): void {
  const directory = dirname(location);
  try {
    mkdirSync(directory, { recursive: true });
  } catch (cause) {
    const code = String((cause as NodeJS.ErrnoException).code ?? "EIO");
    let problem = `${(cause as Error).message}`;
    if (code === "EEXIST" || code === "ENOTDIR") {
      let blocking = directory;
      for (let parent = directory; parent !== dirname(parent); parent = dirname(parent)) {
        if (existsSync(parent) && !statSync(parent).isDirectory()) blocking = parent;
      }
      problem = `'${blocking}' is a file, not a directory`;
    } else if (code === "EACCES" || code === "EPERM" || code === "EROFS") {
      problem = `this process may not create '${directory}'`;
    }
    throw new SessionStoreDirectoryError(location, problem, code, { cause });
  }
}

/**
 * The typed error for what the store's worker reported: a Rein fault by its
 * kind, an SQLite error by its primary result code. `attemptMs` is how long
 * one attempt waited for the write lock.
 * @internal
 */
export function storeFault(error: unknown, location: string, attemptMs: number): Error {
  if (error instanceof SqliteWorkerGone) {
    return new SessionStoreError(
      `Session store '${location}' lost its SQLite worker thread (${error.message}). Open a new SessionStore({ path: '${location}' }).`,
      location,
      { cause: error },
    );
  }
  if (!(error instanceof SqliteCallFailure)) return error as Error;
  const { failure } = error;
  const data = (failure.data ?? {}) as Record<string, unknown>;
  switch (failure.kind) {
    case "foreign":
      return new ForeignDatabaseError(location, data["tables"] as string[]);
    case "schema-version":
      return new SessionSchemaVersionError(location, Number(data["foundVersion"]), Number(data["supportedVersion"]));
    case "session-not-found":
      return new SessionNotFoundError(String(data["sessionId"]), location);
    case "session-exists":
      return new SessionExistsError(String(data["sessionId"]), location);
    case "node-not-found":
      return new SessionNodeNotFoundError(String(data["sessionId"]), String(data["nodeId"]), location);
    case "node-conflict":
      return new SessionNodeConflictError(String(data["sessionId"]), String(data["nodeId"]), location);
    case "closed":
      return new SessionStoreClosedError(location);
    case "lease-lost":
      return new LeaseLostError(String(data["runId"]), Number(data["heldEpoch"]), data["currentEpoch"] === null ? null : Number(data["currentEpoch"]), location);
  }
  return sqliteFault(failure, error, location, attemptMs);
}

function sqliteFault(failure: SqliteFailure, error: SqliteCallFailure, location: string, attemptMs: number): Error {
  // A failed open reports no code, only SQLite's number in its message.
  const opened = /Unable to open connection[^:]*: *(\d+)/.exec(failure.message);
  const primary = ((failure.rawCode ?? (opened === null ? -1 : Number(opened[1]))) & 0xff) as number;
  const cause = new SessionStoreError(`${failure.code ?? "SQLite"}: ${failure.message}`, location);
  switch (primary) {
    case 5: // SQLITE_BUSY
    case 6: // SQLITE_LOCKED
      return new SessionStoreBusyError(location, attemptMs, { cause });
    case 11: // SQLITE_CORRUPT
    case 26: // SQLITE_NOTADB
      return new SessionStoreCorruptError(location, new Error(failure.message));
    case 13: // SQLITE_FULL
      return new SessionStoreDiskFullError(location, { cause });
    case 3: // SQLITE_PERM
    case 8: // SQLITE_READONLY
    case 10: // SQLITE_IOERR (e.g. EACCES on the -shm file)
    case 14: // SQLITE_CANTOPEN
    case 23: {
      // SQLITE_AUTH
      const readOnly = readOnlyTarget(location);
      if (readOnly !== undefined) return new SessionStoreReadOnlyError(location, readOnly, failure.message, { cause });
    }
  }
  return new SessionStoreError(
    `Session store '${location}' failed: ${failure.message}${failure.code === undefined ? "" : ` (${failure.code})`}. ` +
      `Check that the file and its directory are readable and writable, or pass another { path } to SessionStore.`,
    location,
    { cause: error },
  );
}

/** Which of the file and its directory this process cannot write, if either. */
function readOnlyTarget(location: string): "file" | "directory" | undefined {
  if (location.startsWith(":")) return undefined;
  const writable = (path: string): boolean => {
    try {
      accessSync(path, constants.W_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (existsSync(location) && !writable(location)) return "file";
  if (!writable(dirname(location))) return "directory";
  return undefined;
}
