/**
 * The SQL side of {@link SessionStore}, run in a worker thread that owns
 * the one `libsql` connection of a store (`sqlite-worker-loop.ts` is the
 * thread's request loop, `sqlite-connection.ts` the store's end).
 *
 * Why a thread: libsql 0.5.29 keeps a connection (and its three file
 * descriptors: the database, `-wal`, `-shm`) open while any prepared
 * statement object is still alive, i.e. until garbage collection. The
 * thread that holds the connection can collect its statements and close it
 * at once, and ending the thread releases everything regardless.
 *
 * The worker's operations come in three parts, each in a file of its own:
 * the connection (`sqlite-worker-database.ts`), the session and node
 * queries (`sqlite-session-queries.ts`) and the run-lease queries
 * (`sqlite-run-queries.ts`); {@link sqliteSessionOperations} puts them
 * together. All of them are started from their source text
 * (`Function.prototype.toString`, see {@link sqliteOperationsSource}), so
 * none may use anything from its module scope: every import comes through
 * `load` or the parts, and types only.
 * @internal
 */

import { sqliteWorkerDatabase } from "./sqlite-worker-database";
import { sqliteSessionQueries } from "./sqlite-session-queries";
import { sqliteRunQueries } from "./sqlite-run-queries";
import type { SqliteOperation, SqliteOperations, SqliteWorkerData } from "./sqlite-worker-protocol";

export type {
  EncodedOperation,
  SqliteFailure,
  SqliteOperations,
  SqliteReply,
  SqliteRequest,
  SqliteWorkerData,
} from "./sqlite-worker-protocol";

/** The parts {@link sqliteSessionOperations} is made of, handed in because it sees nothing of its module. @internal */
export interface SqliteOperationParts {
  readonly database: typeof sqliteWorkerDatabase;
  readonly sessions: typeof sqliteSessionQueries;
  readonly runs: typeof sqliteRunQueries;
}

/**
 * The SQL side of the worker: opens the connection on `open` and answers
 * every store operation. Self-contained: see the file comment.
 * @internal
 */
export function sqliteSessionOperations(load: (id: string) => unknown, data: SqliteWorkerData, parts: SqliteOperationParts): SqliteOperations {
  const db = parts.database(load, data);
  // The two query sets need one check of each other: read through `sessions` once both exist.
  const runs = parts.runs(db, data, (sessionId) => sessions.assertSession(sessionId));
  const sessions = parts.sessions(db, data, runs.checkFence);
  const operations: Record<string, SqliteOperation> = {
    open: db.open,
    ...sessions.operations,
    ...runs.operations,
    close: db.close,
  };

  return {
    run(op: string, args: readonly unknown[]): unknown {
      const operation = operations[op];
      if (operation === undefined) throw db.fault("internal", `unknown operation ${op}`);
      return operation(...(args as never[]));
    },
    failed: db.failed,
    idle: db.idle,
  };
}

/**
 * The source text of an expression that makes the worker's
 * {@link SqliteOperations}: {@link sqliteSessionOperations} called with
 * `load` and `data` (themselves source text, evaluated in the worker) and
 * its parts.
 * @internal
 */
export function sqliteOperationsSource(load: string, data: string): string {
  const parts =
    `{ database: (${sqliteWorkerDatabase.toString()}), ` +
    `sessions: (${sqliteSessionQueries.toString()}), ` +
    `runs: (${sqliteRunQueries.toString()}) }`;
  return `(${sqliteSessionOperations.toString()})(${load}, ${data}, ${parts})`;
}
