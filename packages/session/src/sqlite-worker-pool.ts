import { MessageChannel, Worker, type MessagePort } from "node:worker_threads";
import { sqliteOperationsSource, type SqliteWorkerData } from "./sqlite-session-worker";
import { WORKER_SIGNAL } from "./sync-worker-bridge";
import { sqliteWorkerLoop } from "./sqlite-worker-loop";

/**
 * The threads SQLite stores run on. Starting a worker thread was most of what opening a store cost (about 100 ms
 * of CPU per open and close, 18 ms with a kept thread: docs/core/sessions.md, "Threads and handles"); a thread whose store closed cleanly is kept for a while
 * and serves the next store opened in the process, so a process that opens and closes stores in turn (a test
 * suite, a server with a store per tenant, `rein` commands in one process) starts a thread once.
 *
 * Each open store still has a thread of its own: a kept thread serves one store at a time, and only after the
 * store before it answered `close` — its connection closed and its statements collected
 * (`sqlite-worker-loop.ts`). A thread that failed, or whose store did not close cleanly, is ended, never kept.
 * At most {@link KEPT_THREADS} are kept, each for at most {@link KEPT_FOR_MS}; a kept thread never keeps the
 * process alive.
 * @internal
 */

/** How many idle threads a process keeps for the next stores. */
export const KEPT_THREADS = 2;

/** How long an idle thread is kept before it is ended, in ms. */
export const KEPT_FOR_MS = 10_000;

// The thread's code, from source text (it sees nothing of these modules). esbuild (tsx) names functions through
// a helper the text must bring along. It serves the connection it was started with, then each one handed to it
// on the pool port. A connection that fails to start says so through its signal, so a caller waiting for its
// reply never waits forever.
const WORKER_SOURCE =
  '"use strict";\nvar __name = (target, value) => Object.defineProperty(target, "name", { value, configurable: true });\n' +
  'const threads = require("node:worker_threads");\n' +
  "function serve(data) {\n" +
  `  try {\n    (${sqliteWorkerLoop.toString()})(require, data, ${sqliteOperationsSource("require", "data")});\n` +
  `  } catch (error) {\n    const signal = new Int32Array(data.signal);\n` +
  `    Atomics.store(signal, ${WORKER_SIGNAL.ended}, 1);\n    Atomics.notify(signal, ${WORKER_SIGNAL.replies});\n    throw error;\n  }\n}\n` +
  'threads.workerData.pool.on("message", serve);\n' +
  "serve(threads.workerData.first);\n";

/** A store's thread, as {@link takeThread} hands it out. @internal */
export interface SqliteThread {
  /** Calls `ended` when the thread ends (it exited or failed) while this store holds it. */
  onEnded(ended: () => void): void;
  /** Gives the thread back: kept for the next store when `closed` (the store answered `close`), else ended. */
  release(closed: boolean): void;
}

interface PooledThread {
  readonly worker: Worker;
  /** The pool's end of the port the thread receives its next connection on. */
  readonly pool: MessagePort;
  /** Called when the thread ends; set while a store holds it. */
  ended?: () => void;
  /** Ends a kept thread that waited too long. */
  expiry?: NodeJS.Timeout;
}

const kept: PooledThread[] = [];

function start(data: SqliteWorkerData): PooledThread {
  const channel = new MessageChannel();
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { pool: channel.port2, first: data },
    transferList: [channel.port2, data.port, data.asyncPort],
    stdout: false,
    stderr: false,
  });
  // Never keeps the process alive: an idle store, or a kept thread, must not hold up exit.
  worker.unref();
  const thread: PooledThread = { worker, pool: channel.port1 };
  const gone = (): void => {
    const at = kept.indexOf(thread);
    if (at >= 0) kept.splice(at, 1);
    clearTimeout(thread.expiry);
    thread.ended?.();
  };
  worker.on("error", gone);
  worker.on("exit", gone);
  return thread;
}

function end(thread: PooledThread): void {
  thread.ended = undefined;
  thread.pool.close();
  void thread.worker.terminate().catch(() => undefined);
}

function keep(thread: PooledThread): void {
  thread.ended = undefined;
  if (kept.length >= KEPT_THREADS) {
    end(thread);
    return;
  }
  kept.push(thread);
  thread.expiry = setTimeout(() => {
    kept.splice(kept.indexOf(thread), 1);
    end(thread);
  }, KEPT_FOR_MS);
  thread.expiry.unref();
}

/**
 * A thread serving the connection `data` describes: a kept one when there is one, else a new one. The ports in
 * `data` are transferred to it.
 * @internal
 */
export function takeThread(data: SqliteWorkerData): SqliteThread {
  const reused = kept.pop();
  let thread: PooledThread;
  if (reused === undefined) {
    thread = start(data);
  } else {
    thread = reused;
    clearTimeout(thread.expiry);
    thread.pool.postMessage(data, [data.port, data.asyncPort]);
  }
  let released = false;
  return {
    onEnded(ended) {
      if (!released) thread.ended = ended;
    },
    release(closed) {
      if (released) return;
      released = true;
      if (closed) keep(thread);
      else end(thread);
    },
  };
}
