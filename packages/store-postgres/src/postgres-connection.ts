import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";
import { postgresWorker, SIGNAL_ENDED, SIGNAL_REPLIES, type PostgresReply, type PostgresWorkerData } from "./postgres-worker";
import { PostgresCallFailure, PostgresWorkerGone } from "./postgres-faults";

/** What the store tells the worker; the rest is the connection's plumbing. @internal */
export type PostgresConnectionOptions = Omit<PostgresWorkerData, "port" | "asyncPort" | "signal" | "pgPath">;

// One worker thread per process serves every store's connection: a store
// attaches by posting its data (ports, signal, options), and the thread runs
// an independent {@link postgresWorker} for it. Starting a thread and loading
// `pg` in it costs ~40 ms, paid once per process instead of once per store.
// esbuild (tsx) names functions through a helper that the source text must
// bring along. A store whose attach fails hears it through its signal, so a
// caller waiting for its reply never waits forever.
const WORKER_SOURCE =
  '"use strict";\nvar __name = (target, value) => Object.defineProperty(target, "name", { value, configurable: true });\n' +
  `const threads = require("node:worker_threads");\n` +
  `threads.parentPort.on("message", (data) => {\n` +
  `  try {\n    (${postgresWorker.toString()})(require, data);\n  } catch (error) {\n` +
  `    const signal = new Int32Array(data.signal);\n` +
  `    Atomics.store(signal, ${SIGNAL_ENDED}, 1);\n    Atomics.notify(signal, ${SIGNAL_REPLIES});\n  }\n});\n`;

/** The process's worker thread, started by the first store and shared by all. */
let host: Worker | undefined;
/** Connections attached to {@link host}: told when it ends. */
const attached = new Set<PostgresConnection>();

function sharedHost(): Worker {
  if (host !== undefined) return host;
  const started = new Worker(WORKER_SOURCE, { eval: true, stdout: false, stderr: false, name: "rein-postgres-session-stores" });
  // Never keeps the process alive: an idle store must not hold up exit.
  started.unref();
  const gone = (): void => {
    if (host === started) host = undefined;
    for (const connection of [...attached]) connection.workerEnded();
  };
  started.on("error", gone);
  started.on("exit", gone);
  return (host = started);
}

let pgPath: string | undefined;

/**
 * The store's end of its Postgres worker thread (see {@link postgresWorker}):
 * a synchronous call posts its request and sleeps in `Atomics.wait` until
 * the worker has posted the reply and bumped the reply counter, then reads
 * the reply with `receiveMessageOnPort`; an asynchronous call resolves from
 * the event loop and never blocks it. The worker runs requests in the order
 * they were posted, synchronous and asynchronous alike.
 * @internal
 */
export class PostgresConnection {
  private readonly port: MessagePort;
  private readonly asyncPort: MessagePort;
  private readonly signal: Int32Array;
  private replies = 0;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  /** True once the worker has ended or was told to. */
  ended = false;

  /** Starts the worker; nothing is connected until the first call. */
  constructor(options: PostgresConnectionOptions) {
    pgPath ??= require.resolve("pg");
    const sync = new MessageChannel();
    const async = new MessageChannel();
    this.port = sync.port1;
    this.asyncPort = async.port1;
    this.signal = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
    const workerData: PostgresWorkerData = { ...options, pgPath, port: sync.port2, asyncPort: async.port2, signal: this.signal.buffer as SharedArrayBuffer };
    sharedHost().postMessage(workerData, [sync.port2, async.port2]);
    attached.add(this);
    this.asyncPort.on("message", (reply: PostgresReply) => this.settle(reply));
    // The port does not keep the process alive while nothing waits on it
    // (a listener refs the port, so unref after adding it).
    this.asyncPort.unref();
  }

  /** The shared worker thread ended: every request of this connection fails. @internal */
  workerEnded(): void {
    attached.delete(this);
    Atomics.store(this.signal, SIGNAL_ENDED, 1);
    this.fail();
  }

  /** Runs `op` in the worker and waits for its answer; the event loop waits too. */
  call(op: string, ...args: unknown[]): unknown {
    if (this.ended) throw new PostgresWorkerGone("the store's Postgres worker has ended");
    const expected = ++this.replies;
    this.port.postMessage({ id: 0, op, args });
    for (;;) {
      const replies = Atomics.load(this.signal, SIGNAL_REPLIES);
      if (replies >= expected) break;
      if (Atomics.load(this.signal, SIGNAL_ENDED) === 1) {
        this.release();
        throw new PostgresWorkerGone("the store's Postgres worker has ended");
      }
      Atomics.wait(this.signal, SIGNAL_REPLIES, replies, 1000);
    }
    const reply = receiveMessageOnPort(this.port)!.message as PostgresReply;
    if (reply.failure !== undefined) throw new PostgresCallFailure(reply.failure);
    return reply.value;
  }

  /** Runs `op` in the worker; the promise settles from the event loop, which is never blocked. */
  callAsync(op: string, ...args: unknown[]): Promise<unknown> {
    if (this.ended) return Promise.reject(new PostgresWorkerGone("the store's Postgres worker has ended"));
    const id = this.nextId++;
    const settled = new Promise<unknown>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    if (this.pending.size === 1) this.asyncPort.ref();
    this.port.postMessage({ id, op, args });
    return settled;
  }

  /**
   * Ends the connection and the worker. The worker answers `close` after
   * every request posted before it, and after its connection has ended.
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
        this.settle(received.message as PostgresReply);
      }
      this.release();
    }
  }

  private settle(reply: PostgresReply): void {
    const waiting = this.pending.get(reply.id);
    if (waiting === undefined) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.asyncPort.unref();
    if (reply.failure !== undefined) waiting.reject(new PostgresCallFailure(reply.failure));
    else waiting.resolve(reply.value);
  }

  private release(): void {
    this.ended = true;
    attached.delete(this);
    // The worker ended this connection's client before answering `close`; the thread stays for other stores.
    this.port.close();
    this.asyncPort.close();
    this.fail();
  }

  private fail(): void {
    this.ended = true;
    for (const [id, waiting] of this.pending) {
      this.pending.delete(id);
      waiting.reject(new PostgresWorkerGone("the store's Postgres worker has ended"));
    }
  }
}
