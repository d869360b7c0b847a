/**
 * The thread side of the SQLite store's worker (see
 * `sqlite-session-worker.ts` for the SQL side): waits for requests on the
 * shared signal, runs each with the operations, and answers on the
 * synchronous port (id 0) or the async one. On `close` it collects the
 * dropped statement objects before answering, so the connection — and its
 * file handles — are gone when the caller's close() returns.
 *
 * The protocol is `SyncWorkerBridge`'s (`sync-worker-bridge.ts`): this
 * loop is the worker end of it. Started from its source text, like the
 * operations: it uses nothing from its module scope.
 * @internal
 */

import type { SqliteOperations, SqliteReply, SqliteRequest, SqliteWorkerData } from "./sqlite-session-worker";

/**
 * The worker's request loop for one connection (`data`). Returns when the connection's `close` has been handled;
 * its answer follows once the connection has let go of everything, and the thread's event loop is then free to
 * take the next connection (sqlite-worker-pool.ts). Self-contained.
 * @internal
 */
export function sqliteWorkerLoop(load: (id: string) => unknown, data: SqliteWorkerData, operations: SqliteOperations): void {
  const threads = load("node:worker_threads") as typeof import("node:worker_threads");
  const signal = new Int32Array(data.signal);
  // The WORKER_SIGNAL slots of sync-worker-bridge.ts, repeated: this function sees nothing of its module.
  const REQUESTS = 0;
  const REPLIES = 1;
  const ENDED = 2;
  const SPIN_MS = 0.2;

  function handle(request: SqliteRequest): SqliteReply {
    try {
      return { id: request.id, value: operations.run(request.op, request.args) };
    } catch (error) {
      return { id: request.id, failure: operations.failed(error) };
    }
  }

  function reply(request: SqliteRequest, answer: SqliteReply): void {
    if (request.id === 0) {
      data.port.postMessage(answer);
      Atomics.add(signal, REPLIES, 1);
      Atomics.notify(signal, REPLIES);
    } else {
      data.asyncPort.postMessage(answer);
    }
  }

  function end(): void {
    Atomics.store(signal, ENDED, 1);
    Atomics.notify(signal, REPLIES);
    data.port.close();
    data.asyncPort.close();
  }

  /**
   * After `close`, the statement objects are garbage; collecting them now
   * (their finalizers run on the next turn) closes the connection before the
   * reply, so the caller's close() returns with every handle released.
   */
  function release(request: SqliteRequest, answer: SqliteReply): void {
    try {
      const v8 = load("node:v8") as typeof import("node:v8");
      const vm = load("node:vm") as typeof import("node:vm");
      v8.setFlagsFromString("--expose-gc");
      const collect = vm.runInNewContext("gc") as (() => void) | undefined;
      v8.setFlagsFromString("--no-expose-gc");
      collect?.();
    } catch {
      /* the handles go when the thread ends */
    }
    setImmediate(() =>
      setImmediate(() => {
        reply(request, answer);
        end();
      }),
    );
  }

  let seen = 0;
  try {
    for (;;) {
      // Requests come in bursts (a turn's commit, then the next turn's a few
      // tens of µs later): spinning 0.2 ms answers the next one in ~3 µs
      // instead of a futex wake-up (15-60 µs on a busy machine). It costs at
      // most 0.2 ms of one core after each burst; measured: the SQLite
      // recording cost per turn went from a 164 µs to a 146 µs median.
      const spinUntil = performance.now() + SPIN_MS;
      while (Atomics.load(signal, REQUESTS) === seen && performance.now() < spinUntil);
      Atomics.wait(signal, REQUESTS, seen);
      seen = Atomics.load(signal, REQUESTS);
      for (let received = threads.receiveMessageOnPort(data.port); received !== undefined; received = threads.receiveMessageOnPort(data.port)) {
        const request = received.message as SqliteRequest;
        const answer = handle(request);
        if (request.op === "close") {
          release(request, answer);
          return;
        }
        reply(request, answer);
      }
      // Nothing waits: background work now, not inside a caller's request.
      if (Atomics.load(signal, REQUESTS) === seen) operations.idle();
    }
  } catch (error) {
    end();
    throw error;
  }
}
