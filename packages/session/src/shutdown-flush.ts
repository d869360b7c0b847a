import type { SessionStoreLike } from "./session-store-like";
import { SessionStoreBusyError } from "./session-errors";

/** Signals on which pending session writes are committed before exit. */
const SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM"];

const stores = new Set<SessionStoreLike>();

/**
 * Runs `work`, trying again while the database is locked by another
 * connection, up to the store's `busyTimeoutMs`: the process is exiting, so
 * blocking is the lesser harm than leaving the batch unwritten.
 */
function persist(store: SessionStoreLike, work: () => void): void {
  const waitMs = (store as { busyTimeoutMs?: unknown }).busyTimeoutMs;
  const deadline = Date.now() + (typeof waitMs === "number" ? waitMs : 0);
  for (;;) {
    try {
      work();
      return;
    } catch (error) {
      if (!SessionStoreBusyError.isInstance(error) || Date.now() >= deadline) throw error;
    }
  }
}

function settle(): void {
  for (const store of [...stores]) {
    // Best effort: one failing store must not keep the others from settling.
    try {
      // On a store's asynchronous path, flush() only starts commits, which never finish once the process exits.
      persist(store, () => (store.flushSync !== undefined ? store.flushSync() : store.flush()));
    } catch {
      /* the batch stays queued; nothing more can be done while exiting */
    }
    try {
      persist(store, () => store.interruptRunning());
    } catch {
      /* store already closed or unwritable */
    }
  }
}

function onSignal(signal: NodeJS.Signals): void {
  settle();
  // With no other handler, give the signal its default effect (exit with
  // 128 + n) by re-raising it without ours; otherwise the application's own
  // handler decides whether to exit.
  if (process.listenerCount(signal) === 1) {
    stores.clear();
    uninstallAll();
    process.kill(process.pid, signal);
  }
}

function onExit(): void {
  settle();
}

function installAll(): void {
  for (const signal of SIGNALS) process.on(signal, onSignal);
  process.on("exit", onExit);
}

function uninstallAll(): void {
  for (const signal of SIGNALS) process.off(signal, onSignal);
  process.off("exit", onExit);
}

/**
 * On SIGINT, SIGTERM or `process.exit`, commits the pending batches of every
 * writer on `store` and marks the store's `running` nodes `interrupted`
 * (waiting, while another connection holds the lock, up to the store's
 * `busyTimeoutMs`),
 * then lets the signal take its default effect (unless the application has
 * its own handler). One process-wide handler serves every registered store.
 * `SessionStore` registers itself unless `{ shutdownFlush: false }`.
 * Returns a function that unregisters the store (idempotent).
 *
 * @example
 * ```ts
 * const store = new InMemorySessionStore();
 * const uninstall = installShutdownFlush(store);
 * // ... later
 * uninstall();
 * ```
 */
export function installShutdownFlush(store: SessionStoreLike): () => void {
  if (stores.size === 0) installAll();
  stores.add(store);
  return () => {
    if (!stores.delete(store)) return;
    if (stores.size === 0) uninstallAll();
  };
}
