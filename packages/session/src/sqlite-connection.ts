import { Worker } from "node:worker_threads";
import { SyncWorkerBridge, WORKER_SIGNAL } from "./sync-worker-bridge";
import { sqliteOperationsSource, type SqliteFailure, type SqliteWorkerData } from "./sqlite-session-worker";
import { sqliteWorkerLoop } from "./sqlite-worker-loop";

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

// esbuild (tsx) names functions through a helper that the worker's source
// text must bring along. A worker that fails to start says so through the
// signal, so a caller waiting for its reply never waits forever.
const WORKER_SOURCE =
  '"use strict";\nvar __name = (target, value) => Object.defineProperty(target, "name", { value, configurable: true });\n' +
  `try {\n  (${sqliteWorkerLoop.toString()})(require, ${sqliteOperationsSource("require", 'require("node:worker_threads").workerData')});\n} catch (error) {\n` +
  `  const signal = new Int32Array(require("node:worker_threads").workerData.signal);\n` +
  `  Atomics.store(signal, ${WORKER_SIGNAL.ended}, 1);\n  Atomics.notify(signal, ${WORKER_SIGNAL.replies});\n  throw error;\n}\n`;

let libsqlPath: string | undefined;

/** How long a synchronous call spins for its answer before it sleeps, in ms. */
const SPIN_MS = 0.5;

/**
 * The store's end of its SQLite worker thread (see
 * {@link sqliteWorkerLoop} and `sqliteSessionOperations`): one
 * {@link SyncWorkerBridge} to a thread of its own. Synchronous calls wait for
 * the reply with `Atomics.wait` (the worker holds the lock for at most one
 * short attempt, so the wait is short); asynchronous calls resolve from the
 * event loop and never block it.
 * @internal
 */
export class SqliteConnection {
  private readonly worker: Worker;
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
      onRelease: () => void this.worker.terminate().catch(() => undefined),
    });
    const ends = this.bridge.workerEnds;
    const workerData: SqliteWorkerData = { ...options, libsqlPath, ...ends };
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData, transferList: [ends.port, ends.asyncPort], stdout: false, stderr: false });
    // Never keeps the process alive: an idle store must not hold up exit.
    this.worker.unref();
    this.worker.on("error", () => this.bridge.workerEnded());
    this.worker.on("exit", () => this.bridge.workerEnded());
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
