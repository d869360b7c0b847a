import { Worker } from "node:worker_threads";
import { SyncWorkerBridge, WORKER_SIGNAL } from "@rein/session";
import { postgresWorkerSource, type PostgresFailure, type PostgresWorkerData } from "./postgres-worker";
import { PostgresCallFailure, PostgresWorkerGone } from "./postgres-faults";

/** What the store tells the worker; the rest is the connection's plumbing. @internal */
export type PostgresConnectionOptions = Omit<PostgresWorkerData, "port" | "asyncPort" | "signal" | "pgPath">;

// One worker thread per process serves every store's connection: a store
// attaches by posting its data (ports, signal, options), and the thread runs
// an independent {@link postgresWorker} for it. Starting a thread and loading
// `pg` in it costs ~40 ms, paid once per process instead of once per store
// (once more only after {@link HOST_KEPT_FOR_MS} with no store open).
// esbuild (tsx) names functions through a helper that the source text must
// bring along. A store whose attach fails hears it through its signal, so a
// caller waiting for its reply never waits forever.
const WORKER_SOURCE =
  '"use strict";\nvar __name = (target, value) => Object.defineProperty(target, "name", { value, configurable: true });\n' +
  `const threads = require("node:worker_threads");\n` +
  `threads.parentPort.on("message", (data) => {\n` +
  `  try {\n    ${postgresWorkerSource("require", "data")};\n  } catch (error) {\n` +
  `    const signal = new Int32Array(data.signal);\n` +
  `    Atomics.store(signal, ${WORKER_SIGNAL.ended}, 1);\n    Atomics.notify(signal, ${WORKER_SIGNAL.replies});\n  }\n});\n`;

/**
 * How long the thread stays once no store is attached: a store opened soon
 * after reuses it; after that, the process has no idle thread (nor `pg`
 * loaded in one) for stores it no longer has.
 * @internal
 */
export const HOST_KEPT_FOR_MS = 10_000;

/** The process's worker thread and the connections attached to it (told when it ends). */
interface Host {
  readonly worker: Worker;
  readonly attached: Set<PostgresConnection>;
  /** Ends the thread once it has had no store for {@link HOST_KEPT_FOR_MS}. */
  idle: ReturnType<typeof setTimeout> | undefined;
}

/** The process's worker thread, started by the first store and shared by all while any is open. */
let host: Host | undefined;

function sharedHost(): Host {
  if (host !== undefined) {
    clearTimeout(host.idle);
    host.idle = undefined;
    return host;
  }
  const worker = new Worker(WORKER_SOURCE, { eval: true, stdout: false, stderr: false, name: "rein-postgres-session-stores" });
  // Never keeps the process alive: an idle store must not hold up exit.
  worker.unref();
  const started: Host = { worker, attached: new Set(), idle: undefined };
  const gone = (): void => {
    if (host === started) host = undefined;
    clearTimeout(started.idle);
    for (const connection of [...started.attached]) connection.workerEnded();
  };
  worker.on("error", gone);
  worker.on("exit", gone);
  return (host = started);
}

/** `connection` is no longer attached to `from`: the last one to leave starts the thread's idle period. */
function detach(from: Host, connection: PostgresConnection): void {
  from.attached.delete(connection);
  if (from.attached.size > 0 || host !== from || from.idle !== undefined) return;
  // A store attaching meanwhile clears this timer (sharedHost), and a thread that ends clears it too.
  from.idle = setTimeout(() => {
    host = undefined;
    void from.worker.terminate();
  }, HOST_KEPT_FOR_MS);
  from.idle.unref();
}

/** The `threadId` of the process's Postgres worker thread, or undefined when it has none (tests). @internal */
export function postgresHostThreadId(): number | undefined {
  return host?.worker.threadId;
}

let pgPath: string | undefined;

/**
 * The store's end of its Postgres worker (see {@link postgresWorker}): one
 * {@link SyncWorkerBridge} to the process's shared worker thread. A
 * synchronous call sleeps in `Atomics.wait` until the worker has posted
 * the reply; an asynchronous call resolves from the event loop and never
 * blocks it. The worker runs requests in the order they were posted,
 * synchronous and asynchronous alike.
 * @internal
 */
export class PostgresConnection {
  private readonly bridge: SyncWorkerBridge<PostgresFailure>;
  private readonly host: Host;

  /** Attaches to the worker; nothing is connected until the first call. */
  constructor(options: PostgresConnectionOptions) {
    pgPath ??= require.resolve("pg");
    this.bridge = new SyncWorkerBridge<PostgresFailure>({
      failed: (failure) => new PostgresCallFailure(failure),
      gone: () => new PostgresWorkerGone("the store's Postgres worker has ended"),
      // The worker ended this connection's client before answering `close`; the thread stays for other stores a while.
      onRelease: () => detach(this.host, this),
    });
    const ends = this.bridge.workerEnds;
    const workerData: PostgresWorkerData = { ...options, pgPath, ...ends };
    this.host = sharedHost();
    this.host.worker.postMessage(workerData, [ends.port, ends.asyncPort]);
    this.host.attached.add(this);
  }

  /** True once the worker has ended or the connection was closed. */
  get ended(): boolean {
    return this.bridge.ended;
  }

  /** The shared worker thread ended: every request of this connection fails. @internal */
  workerEnded(): void {
    this.host.attached.delete(this);
    this.bridge.workerEnded();
  }

  /** Runs `op` in the worker and waits for its answer; the event loop waits too. */
  call(op: string, ...args: unknown[]): unknown {
    return this.bridge.call(op, ...args);
  }

  /** Runs `op` in the worker; the promise settles from the event loop, which is never blocked. */
  callAsync(op: string, ...args: unknown[]): Promise<unknown> {
    return this.bridge.callAsync(op, ...args);
  }

  /**
   * Ends the connection. The worker answers `close` after every request
   * posted before it, and after its connection has ended.
   */
  close(): void {
    this.bridge.close();
  }

  /** {@link close}, answered from the event loop: it never blocks. */
  closeAsync(): Promise<void> {
    return this.bridge.closeAsync();
  }
}
