import type { SessionStoreLike } from "./session-store-like";

/** Something with a pending batch to commit. */
interface Flushable {
  flush(): void;
}

// Writers register only while they hold a pending batch, so a store can
// commit them on close or at shutdown without keeping idle writers alive.
const pendingByStore = new WeakMap<SessionStoreLike, Set<Flushable>>();

/** @internal */
export function markPending(store: SessionStoreLike, writer: Flushable): void {
  let writers = pendingByStore.get(store);
  if (writers === undefined) pendingByStore.set(store, (writers = new Set()));
  writers.add(writer);
}

/** @internal */
export function markSettled(store: SessionStoreLike, writer: Flushable): void {
  pendingByStore.get(store)?.delete(writer);
}

/**
 * Commits every pending writer of `store`; throws the first failure after
 * trying them all.
 * @internal
 */
export function flushPendingWriters(store: SessionStoreLike): void {
  const writers = pendingByStore.get(store);
  if (writers === undefined) return;
  let failure: unknown;
  for (const writer of [...writers]) {
    try {
      writer.flush();
    } catch (error) {
      failure ??= error;
    }
  }
  if (failure !== undefined) throw failure;
}
