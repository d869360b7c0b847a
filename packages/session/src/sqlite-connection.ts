import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";
import { sqliteSessionOperations, type SqliteFailure, type SqliteReply, type SqliteWorkerData } from "./sqlite-session-worker";
import { SIGNAL_ENDED, SIGNAL_REPLIES, SIGNAL_REQUESTS, sqliteWorkerLoop } from "./sqlite-worker-loop";

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
  `try {\n  (${sqliteWorkerLoop.toString()})(require, (${sqliteSessionOperations.toString()})(require, require("node:worker_threads").workerData));\n} catch (error) {\n` +
  `  const signal = new Int32Array(require("node:worker_threads").workerData.signal);\n` +
  `  Atomics.store(signal, ${SIGNAL_ENDED}, 1);\n  Atomics.notify(signal, ${SIGNAL_REPLIES});\n  throw error;\n}\n`;

let libsqlPath: string | undefined;

/** How long a synchronous call spins for its answer before it sleeps, in ms. */
const SPIN_MS = 0.5;

/**
 * The store's end of its SQLite worker thread (see
 * {@link sqliteWorkerLoop} and {@link sqliteSessionOperations}): synchronous calls wait for the reply with
 * `Atomics.wait` (the worker holds the lock for at most one short attempt,
 * so the wait is short); asynchronous calls resolve from the event loop and
 * never block it.
 * @internal
 */
export class SqliteConnection {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly asyncPort: MessagePort;
  private readonly signal: Int32Array;
  private replies = 0;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private ended = false;

  /** Starts the worker and opens the database; throws {@link SqliteCallFailure} when it cannot. */
  constructor(options: SqliteConnectionOptions) {
    libsqlPath ??= require.resolve("libsql");
    const sync = new MessageChannel();
    const async = new MessageChannel();
    this.port = sync.port1;
    this.asyncPort = async.port1;
    this.signal = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
    const workerData: SqliteWorkerData = { ...options, libsqlPath, port: sync.port2, asyncPort: async.port2, signal: this.signal.buffer as SharedArrayBuffer };
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData, transferList: [sync.port2, async.port2], stdout: false, stderr: false });
    this.asyncPort.on("message", (reply: SqliteReply) => this.settle(reply));
    // Neither keeps the process alive: an idle store must not hold up exit
    // (a listener refs the port, so unref after adding it).
    this.worker.unref();
    this.asyncPort.unref();
    this.worker.on("error", () => this.fail());
    this.worker.on("exit", () => this.fail());
    try {
      this.call("open");
    } catch (error) {
      // Release the file before throwing, as close() would, without a checkpoint.
      try {
        if (!this.ended) this.call("close", false);
      } catch {
        /* the worker is gone, and its handles with it */
      }
      this.release();
      throw error;
    }
  }

  /** Runs `op` in the worker and waits for its answer. */
  call(op: string, ...args: unknown[]): unknown {
    if (this.ended) throw new SqliteWorkerGone("the store's SQLite worker has ended");
    this.port.postMessage({ id: 0, op, args });
    this.wake();
    const expected = ++this.replies;
    // Most answers take microseconds: spin briefly before sleeping on the futex.
    const spinUntil = performance.now() + SPIN_MS;
    while (Atomics.load(this.signal, SIGNAL_REPLIES) < expected && performance.now() < spinUntil);
    for (;;) {
      const replies = Atomics.load(this.signal, SIGNAL_REPLIES);
      if (replies >= expected) break;
      if (Atomics.load(this.signal, SIGNAL_ENDED) === 1) {
        this.ended = true;
        throw new SqliteWorkerGone("the store's SQLite worker has ended");
      }
      Atomics.wait(this.signal, SIGNAL_REPLIES, replies, 1000);
    }
    const reply = receiveMessageOnPort(this.port)!.message as SqliteReply;
    if (reply.failure !== undefined) throw new SqliteCallFailure(reply.failure);
    return reply.value;
  }

  /** Runs `op` in the worker; the promise settles from the event loop, which is never blocked. */
  callAsync(op: string, ...args: unknown[]): Promise<unknown> {
    if (this.ended) return Promise.reject(new SqliteWorkerGone("the store's SQLite worker has ended"));
    const id = this.nextId++;
    const settled = new Promise<unknown>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    if (this.pending.size === 1) this.asyncPort.ref();
    this.port.postMessage({ id, op, args });
    this.wake();
    return settled;
  }

  /**
   * Closes the database and ends the worker. The worker closes the
   * connection before it answers, so every file handle is released when
   * this returns.
   */
  close(): void {
    if (this.ended) return;
    try {
      this.call("close");
    } finally {
      // The worker answers in order: every asynchronous request sent before
      // close has its answer waiting already. Settle them with it, so a
      // commit that succeeded is never reported lost.
      for (let received = receiveMessageOnPort(this.asyncPort); received !== undefined; received = receiveMessageOnPort(this.asyncPort)) {
        this.settle(received.message as SqliteReply);
      }
      this.release();
    }
  }

  private wake(): void {
    Atomics.add(this.signal, SIGNAL_REQUESTS, 1);
    Atomics.notify(this.signal, SIGNAL_REQUESTS);
  }

  private settle(reply: SqliteReply): void {
    const waiting = this.pending.get(reply.id);
    if (waiting === undefined) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.asyncPort.unref();
    if (reply.failure !== undefined) waiting.reject(new SqliteCallFailure(reply.failure));
    else waiting.resolve(reply.value);
  }

  private release(): void {
    this.ended = true;
    this.port.close();
    this.asyncPort.close();
    void this.worker.terminate().catch(() => undefined);
    this.fail();
  }

  private fail(): void {
    this.ended = true;
    for (const [id, waiting] of this.pending) {
      this.pending.delete(id);
      waiting.reject(new SqliteWorkerGone("the store's SQLite worker has ended"));
    }
  }
}
