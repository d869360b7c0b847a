/**
 * The worker of {@link PostgresSessionStore}: it owns the store's one `pg`
 * Client and answers the store's requests. The thread's own event loop
 * stays free for pg's socket I/O while the store's thread waits for a reply
 * with `Atomics.wait` (see `postgres-connection.ts`).
 *
 * The protocol is `SyncWorkerBridge`'s (`@rein/session`): this is its
 * worker end. Requests arrive on `port` and run one at a time, in order (one
 * connection: a transaction must never interleave with another request). A
 * synchronous request (`id` 0) is answered on `port`, and then the reply
 * counter in the shared `signal` is bumped and notified; any other is
 * answered on `asyncPort`.
 *
 * The worker's operations come in parts, each in a file of its own: the
 * connection (`postgres-worker-database.ts`), the migrations
 * (`postgres-worker-migrations.ts`), the crash recovery
 * (`postgres-worker-recovery.ts`), the session and node queries
 * (`postgres-worker-sessions.ts`), the commit (`postgres-worker-commit.ts`)
 * and the run-lease queries (`postgres-worker-runs.ts`); {@link postgresWorker}
 * puts them together. All of them are started from their source text
 * (`Function.prototype.toString`, see {@link postgresWorkerSource}), so none
 * may use anything from its module scope: every import comes through `load`
 * or the parts, and types only.
 * @internal
 */

import { postgresWorkerDatabase } from "./postgres-worker-database";
import { postgresWorkerMigrations } from "./postgres-worker-migrations";
import { postgresWorkerRecovery } from "./postgres-worker-recovery";
import { postgresWorkerSessions } from "./postgres-worker-sessions";
import { postgresWorkerCommit } from "./postgres-worker-commit";
import { postgresWorkerRuns } from "./postgres-worker-runs";
import type { PostgresFailure, PostgresOperation, PostgresPoolData, PostgresReply, PostgresRequest, PostgresWorkerData } from "./postgres-worker-protocol";

export type { PostgresFailure, PostgresOperation, PostgresPoolData, PostgresReply, PostgresRequest, PostgresWorkerData } from "./postgres-worker-protocol";

/** The parts {@link postgresWorker} is made of, handed in because it sees nothing of its module. @internal */
export interface PostgresWorkerParts {
  readonly database: typeof postgresWorkerDatabase;
  readonly migrations: typeof postgresWorkerMigrations;
  readonly recovery: typeof postgresWorkerRecovery;
  readonly sessions: typeof postgresWorkerSessions;
  readonly commit: typeof postgresWorkerCommit;
  readonly runs: typeof postgresWorkerRuns;
}

/** The parts, for {@link postgresWorker} in the store's thread and (as source text) in the worker thread. @internal */
export const postgresWorkerParts: PostgresWorkerParts = {
  database: postgresWorkerDatabase,
  migrations: postgresWorkerMigrations,
  recovery: postgresWorkerRecovery,
  sessions: postgresWorkerSessions,
  commit: postgresWorkerCommit,
  runs: postgresWorkerRuns,
};

/** The store operations of a worker run in pool mode (the asynchronous path), and how it reports a failure. @internal */
export interface PostgresPoolWorker {
  readonly operations: Record<string, PostgresOperation>;
  /** The report of an operation's failure, as the worker thread would post it. */
  failed(error: unknown): PostgresFailure;
}

/**
 * The worker: connects on `open`, migrates the schema, and answers every
 * store operation. Given ports, it serves them and returns undefined; given
 * a pool, it serves nothing and returns the operations. Self-contained: see
 * the file comment.
 * @internal
 */
export function postgresWorker(load: (id: string) => unknown, data: PostgresWorkerData | PostgresPoolData, parts: PostgresWorkerParts): PostgresPoolWorker | undefined {
  // The WORKER_SIGNAL slots of @rein/session's SyncWorkerBridge, repeated: this function sees nothing of its module.
  const REPLIES = 1;
  const ENDED = 2;
  const db = parts.database(load, data);
  const migrations = parts.migrations(db, data);
  const recovery = parts.recovery(db, data);
  const runs = parts.runs(db, data);

  /** Creates or checks the schema, then interrupts the running nodes of stores that are gone. */
  async function open(): Promise<number> {
    await migrations.migrate();
    return recovery.interruptAbandoned();
  }

  const operations: Record<string, PostgresOperation> = {
    open,
    ...parts.sessions(db, data),
    commit: parts.commit(db, data, runs.checkFences),
    interruptAbandoned: recovery.interruptAbandoned,
    ...runs.operations,
    interruptRunning: recovery.interruptRunning,
    close: db.close,
  };

  if ("pool" in data) return { operations, failed: db.failed };

  const ports = data;
  async function serve(request: PostgresRequest): Promise<void> {
    let answer: PostgresReply;
    try {
      const operation = operations[request.op];
      if (operation === undefined) throw db.fault("internal", `unknown operation ${request.op}`);
      answer = { id: request.id, value: await operation(...(request.args as never[])) };
    } catch (error) {
      answer = { id: request.id, failure: db.failed(error) };
    }
    const signal = new Int32Array(ports.signal);
    if (request.id === 0) {
      ports.port.postMessage(answer);
      Atomics.add(signal, REPLIES, 1);
      Atomics.notify(signal, REPLIES);
    } else {
      ports.asyncPort.postMessage(answer);
    }
    if (request.op === "close") {
      Atomics.store(signal, ENDED, 1);
      Atomics.notify(signal, REPLIES);
      ports.port.close();
      ports.asyncPort.close();
    }
  }

  let queue: Promise<void> = Promise.resolve();
  ports.port.on("message", (request: PostgresRequest) => {
    queue = queue.then(() => serve(request));
  });
  // The liveness lock is this store's sign of life to other stores (a lock they can take means its owner is gone): a
  // lost connection is made again at once, backing off to 5 s, in the request order — not only at the next
  // synchronous request, which a store writing on its pool (asyncWrites) may never make.
  let regaining = false;
  const regain = (delayMs: number): void => {
    if (regaining || db.ended()) return;
    regaining = true;
    const timer = setTimeout(() => {
      queue = queue.then(async () => {
        regaining = false;
        if (db.ended() || db.live()) return;
        await db.connection().catch(() => undefined);
        if (!db.live()) regain(Math.min(delayMs * 2, 5_000));
      });
    }, delayMs);
    timer.unref();
  };
  db.whenLost(() => regain(100));
  return undefined;
}

/**
 * The source text of a statement that starts a worker in the worker
 * thread: {@link postgresWorker} called with `load` and `data` (themselves
 * source text, evaluated there) and its parts.
 * @internal
 */
export function postgresWorkerSource(load: string, data: string): string {
  const parts = Object.entries(postgresWorkerParts)
    .map(([name, part]) => `${name}: (${(part as (...args: never[]) => unknown).toString()})`)
    .join(", ");
  return `(${postgresWorker.toString()})(${load}, ${data}, { ${parts} })`;
}
