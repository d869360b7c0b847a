import { SyncWorkerBridge } from "./sync-worker-bridge";
import type { SqliteFailure, SqliteWorkerData } from "./sqlite-session-worker";
import { takeThread, type SqliteThread } from "./sqlite-worker-pool";

/** What the store tells the worker; the rest is the connection's plumbing. @internal */
export type SqliteConnectionOptions = Omit<SqliteWorkerData, "port" | "asyncPort" | "signal" | "libsqlPath">;

/** A request the worker answered with a failure. @internal */
export class SqliteCallFailure extends Error {
  constructor(readonly failure: SqliteFailure) {
    super(failure.message);
  }
}

/** The worker thread ended or stopped answering. @internal */
export class SqliteWorkerGone extends Error {}

let libsqlPath: string | undefined;

/** How long a synchronous call spins for its answer before it sleeps, in ms. */
const SPIN_MS = 0.5;

/**
 * The store's end of its SQLite worker thread (see
 * `sqlite-worker-loop.ts` and `sqliteSessionOperations`): one
 * {@link SyncWorkerBridge} to a thread of its own while it is open (a thread
 * kept from a store closed before, or a new one: `sqlite-worker-pool.ts`). Synchronous calls wait for
 * the reply with `Atomics.wait` (the worker holds the lock for at most one
 * short attempt, so the wait is short); asynchronous calls resolve from the
 * event loop and never block it.
 * @internal
 */
export class SqliteConnection {
  private readonly thread: SqliteThread;
  private readonly bridge: SyncWorkerBridge<SqliteFailure>;

  /** Starts the worker and opens the database; throws {@link SqliteCallFailure} when it cannot. */
  constructor(options: SqliteConnectionOptions) {
    libsqlPath ??= require.resolve("libsql");
    this.bridge = new SyncWorkerBridge<SqliteFailure>({
      failed: (failure) => new SqliteCallFailure(failure),
      gone: () => new SqliteWorkerGone("the store's SQLite worker has ended"),
      // The worker sleeps on the request counter between requests (sqlite-worker-loop.ts).
      wakeWorker: true,
      spinMs: SPIN_MS,
      // A thread whose store closed cleanly may serve the next store (sqlite-worker-pool.ts).
      onRelease: (closed) => this.thread.release(closed),
    });
    const ends = this.bridge.workerEnds;
    const workerData: SqliteWorkerData = { ...options, libsqlPath, ...ends };
    this.thread = takeThread(workerData);
    this.thread.onEnded(() => this.bridge.workerEnded());
    try {
      this.bridge.call("open");
    } catch (error) {
      // Release the file before throwing, as close() would, without a checkpoint.
      try {
        if (!this.bridge.ended) this.bridge.call("close", false);
      } catch {
        /* the worker is gone, and its handles with it */
      }
      this.bridge.release();
      throw error;
    }
  }

  /** Runs `op` in the worker and waits for its answer. */
  call(op: string, ...args: unknown[]): unknown {
    return this.bridge.call(op, ...args);
  }

  /** Runs `op` in the worker; the promise settles from the event loop, which is never blocked. */
  callAsync(op: string, ...args: unknown[]): Promise<unknown> {
    return this.bridge.callAsync(op, ...args);
  }

  /**
   * Closes the database and ends the worker. The worker closes the
   * connection before it answers, so every file handle is released when
   * this returns.
   */
  close(): void {
    this.bridge.close();
  }
}
