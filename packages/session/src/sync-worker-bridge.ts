import { MessageChannel, receiveMessageOnPort, type MessagePort } from "node:worker_threads";

/**
 * A request to a store's worker thread: `id` 0 is a synchronous call,
 * answered on the synchronous port; any other id an asynchronous one,
 * answered on the asynchronous port.
 */
export interface WorkerRequest {
  readonly id: number;
  readonly op: string;
  readonly args: readonly unknown[];
}

/** What a worker reports when an operation failed: `kind` names the fault, the store maps it to a typed error. */
export interface WorkerFailure {
  readonly kind: string;
  readonly message: string;
}

/** A worker's answer to a {@link WorkerRequest}: a value or a failure. */
export interface WorkerReply<F extends WorkerFailure = WorkerFailure> {
  readonly id: number;
  readonly value?: unknown;
  readonly failure?: F;
}

/**
 * Slots of the shared `Int32Array` between a {@link SyncWorkerBridge} and
 * its worker. A worker function started from its source text sees nothing
 * of this module: it repeats these numbers.
 */
export const WORKER_SIGNAL = Object.freeze({
  /** Bumped and notified by the bridge after each request, for a worker that sleeps in `Atomics.wait` between requests. */
  requests: 0,
  /** Bumped and notified by the worker after each synchronous reply. */
  replies: 1,
  /** Set to 1 (and `replies` notified) when the worker has ended or could not start. */
  ended: 2,
});

/** What the worker side is given: the ports it answers on and the shared signal. Transfer the ports. */
export interface WorkerEnds {
  readonly port: MessagePort;
  readonly asyncPort: MessagePort;
  readonly signal: SharedArrayBuffer;
}

/** Options of {@link SyncWorkerBridge}. */
export interface SyncWorkerBridgeOptions<F extends WorkerFailure> {
  /** The error a call throws (or an asynchronous call rejects with) when the worker reported `failure`. */
  readonly failed: (failure: F) => Error;
  /** The error every call gets once the worker has ended. */
  readonly gone: () => Error;
  /**
   * Bump {@link WORKER_SIGNAL}.requests after each request: for a worker
   * that waits on it with `Atomics.wait` instead of on its event loop.
   * @default false
   */
  readonly wakeWorker?: boolean;
  /**
   * How long a synchronous call spins for its reply before it sleeps on the
   * futex, in ms: most answers of a local database take microseconds.
   * @default 0
   */
  readonly spinMs?: number;
  /**
   * Runs once when the bridge lets go of its worker: end the thread, detach from a shared one, or keep it for
   * another connection. `closed` is true when the worker answered `close` (it has let go of everything the
   * connection held); false when it ended, failed to answer, or never answered `open`.
   */
  readonly onRelease?: (closed: boolean) => void;
}

/** How long one `Atomics.wait` sleeps before it looks at the ended flag again, in ms. */
const WAIT_SLICE_MS = 1000;

/**
 * The store's end of a worker thread that owns its database connection, so
 * that the store's methods can be synchronous: a synchronous call posts its
 * request and sleeps in `Atomics.wait` until the worker has posted the
 * reply and bumped the reply counter, then reads the reply with
 * `receiveMessageOnPort`; an asynchronous call resolves from the event loop
 * and never blocks it. The worker answers in the order requests were
 * posted. A worker that ends (crashes, fails to start, or is closed) fails
 * every waiting and later call with `gone()`; `close()` settles the
 * asynchronous replies already sent before it lets go, so a commit that
 * succeeded is never reported lost.
 *
 * The SQLite store (`sqlite-connection.ts`) and `@rein/store-postgres`'s
 * store use it; each supplies only its worker and its database calls.
 *
 * @example
 * ```ts
 * const bridge = new SyncWorkerBridge<MyFailure>({
 *   failed: (failure) => new MyCallFailure(failure),
 *   gone: () => new MyWorkerGone("the store's worker has ended"),
 *   onRelease: () => void worker.terminate(),
 * });
 * const worker = new Worker(source, { eval: true, workerData: { ...bridge.workerEnds }, transferList: [bridge.workerEnds.port, bridge.workerEnds.asyncPort] });
 * bridge.call("open");
 * ```
 */
export class SyncWorkerBridge<F extends WorkerFailure = WorkerFailure> {
  /** The worker's side: pass it to the worker (transferring the two ports). */
  readonly workerEnds: WorkerEnds;
  private readonly port: MessagePort;
  private readonly asyncPort: MessagePort;
  private readonly signal: Int32Array;
  private replies = 0;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private released = false;
  private isEnded = false;

  constructor(private readonly options: SyncWorkerBridgeOptions<F>) {
    const sync = new MessageChannel();
    const async = new MessageChannel();
    this.port = sync.port1;
    this.asyncPort = async.port1;
    this.signal = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
    this.workerEnds = { port: sync.port2, asyncPort: async.port2, signal: this.signal.buffer as SharedArrayBuffer };
    this.asyncPort.on("message", (reply: WorkerReply<F>) => this.settle(reply));
    // The port keeps the process alive only while an asynchronous call waits
    // (a listener refs the port, so unref after adding it).
    this.asyncPort.unref();
  }

  /** True once the worker has ended or the bridge was closed: every call fails with `gone()`. */
  get ended(): boolean {
    return this.isEnded;
  }

  /** Runs `op` in the worker and waits for its answer; throws `failed(failure)` when the worker reports one. */
  call(op: string, ...args: unknown[]): unknown {
    if (this.isEnded) throw this.options.gone();
    const expected = ++this.replies;
    this.port.postMessage({ id: 0, op, args } satisfies WorkerRequest);
    this.wake();
    const spinMs = this.options.spinMs ?? 0;
    if (spinMs > 0) {
      const spinUntil = performance.now() + spinMs;
      while (Atomics.load(this.signal, WORKER_SIGNAL.replies) < expected && performance.now() < spinUntil);
    }
    for (;;) {
      const replies = Atomics.load(this.signal, WORKER_SIGNAL.replies);
      if (replies >= expected) break;
      if (Atomics.load(this.signal, WORKER_SIGNAL.ended) === 1) {
        this.release();
        throw this.options.gone();
      }
      Atomics.wait(this.signal, WORKER_SIGNAL.replies, replies, WAIT_SLICE_MS);
    }
    const reply = receiveMessageOnPort(this.port)!.message as WorkerReply<F>;
    if (reply.failure !== undefined) throw this.options.failed(reply.failure);
    return reply.value;
  }

  /** Runs `op` in the worker; the promise settles from the event loop, which is never blocked. */
  callAsync(op: string, ...args: unknown[]): Promise<unknown> {
    if (this.isEnded) return Promise.reject(this.options.gone());
    const id = this.nextId++;
    const settled = new Promise<unknown>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    if (this.pending.size === 1) this.asyncPort.ref();
    this.port.postMessage({ id, op, args } satisfies WorkerRequest);
    this.wake();
    return settled;
  }

  /**
   * Sends the `close` request (with `args`), then lets go of the worker. The
   * worker answers in order, so every asynchronous request sent before
   * `close` has its answer waiting already: they are settled with it.
   * Closing twice, or after the worker ended, does nothing.
   */
  close(...args: unknown[]): void {
    if (this.isEnded) return;
    let closed = false;
    try {
      this.call("close", ...args);
      closed = true;
    } finally {
      this.settleReceived();
      this.letGo(closed);
    }
  }

  /**
   * {@link close} without blocking the event loop: the `close` request is
   * answered, in order, from the event loop like any asynchronous call. The
   * caller makes no other call meanwhile.
   */
  async closeAsync(...args: unknown[]): Promise<void> {
    if (this.isEnded) return;
    let closed = false;
    try {
      await this.callAsync("close", ...args);
      closed = true;
    } finally {
      this.settleReceived();
      this.letGo(closed);
    }
  }

  /** Settles the asynchronous calls whose replies wait on the port already. */
  private settleReceived(): void {
    for (let received = receiveMessageOnPort(this.asyncPort); received !== undefined; received = receiveMessageOnPort(this.asyncPort)) {
      this.settle(received.message as WorkerReply<F>);
    }
  }

  /**
   * The worker thread has ended (its `exit` or `error` event, or the shared
   * thread it ran on went): waiting and later calls fail with `gone()`.
   */
  workerEnded(): void {
    Atomics.store(this.signal, WORKER_SIGNAL.ended, 1);
    Atomics.notify(this.signal, WORKER_SIGNAL.replies);
    this.fail();
  }

  /** Lets go of the worker without asking it anything (it is gone, or never answered `open`). */
  release(): void {
    this.letGo(false);
  }

  private letGo(closed: boolean): void {
    this.isEnded = true;
    if (!this.released) {
      this.released = true;
      this.port.close();
      this.asyncPort.close();
      this.options.onRelease?.(closed);
    }
    this.fail();
  }

  private wake(): void {
    if (this.options.wakeWorker !== true) return;
    Atomics.add(this.signal, WORKER_SIGNAL.requests, 1);
    Atomics.notify(this.signal, WORKER_SIGNAL.requests);
  }

  private settle(reply: WorkerReply<F>): void {
    const waiting = this.pending.get(reply.id);
    if (waiting === undefined) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.asyncPort.unref();
    if (reply.failure !== undefined) waiting.reject(this.options.failed(reply.failure));
    else waiting.resolve(reply.value);
  }

  private fail(): void {
    this.isEnded = true;
    for (const [id, waiting] of this.pending) {
      this.pending.delete(id);
      waiting.reject(this.options.gone());
    }
  }
}
