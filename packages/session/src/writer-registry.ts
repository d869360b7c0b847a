import type { SessionStoreLike } from "./session-store-like";

/** Something with a pending batch to commit. */
interface Flushable {
  flush(): void;
  /** Commits on the synchronous path, the commit in flight on the asynchronous one included (a writer on a store with `commitAsync`). */
  flushSync?(): void;
  /** Commits and waits for the commit (a writer on a store with `commitAsync`). */
  flushAsync?(): Promise<void>;
}

// Writers are listed only while they hold a pending batch, so a store can
// commit them on close or at shutdown without keeping idle writers alive.
const pendingByStore = new WeakMap<SessionStoreLike, PendingEntry[]>();

/**
 * A writer's place in its store's list of pending writers, made once per
 * writer. The writer joins when its queue becomes non-empty and leaves once
 * it is committed — once per batch, and the runtime commits after every
 * model request — so both are allocation-free: a swap with the last entry,
 * where a `Set` would reallocate its table each time it empties and refills.
 * @internal
 */
export class PendingEntry {
  /** Position in `list`; -1 while the writer has nothing pending. */
  private index = -1;

  constructor(
    readonly writer: Flushable,
    private readonly list: PendingEntry[],
  ) {}

  /** Lists the writer as pending; a no-op while it already is. */
  join(): void {
    if (this.index >= 0) return;
    this.index = this.list.length;
    this.list.push(this);
  }

  /** Takes the writer off the list; the last entry moves into its place. */
  leave(): void {
    const index = this.index;
    if (index < 0) return;
    this.index = -1;
    const last = this.list.pop()!;
    if (last !== this) {
      this.list[index] = last;
      last.index = index;
    }
  }
}

/**
 * The entry through which `writer` joins and leaves the pending writers of
 * `store`.
 * @internal
 */
export function pendingEntry(store: SessionStoreLike, writer: Flushable): PendingEntry {
  let list = pendingByStore.get(store);
  if (list === undefined) pendingByStore.set(store, (list = []));
  return new PendingEntry(writer, list);
}

/**
 * Commits the pending batch of every {@link SessionNodeWriter} of `store` in
 * this process; throws the first failure after trying them all. A store
 * calls it first thing in its `flush()` and `close()`, so `store.flush()`
 * means "everything written so far is committed".
 *
 * @example
 * ```ts
 * flush(): void {
 *   flushPendingWriters(this);
 * }
 * ```
 */
export function flushPendingWriters(store: SessionStoreLike): void {
  flushEach(store, (writer) => writer.flush());
}

/** Runs `flush` on every pending writer of `store`; throws the first failure after trying them all. */
function flushEach(store: SessionStoreLike, flush: (writer: Flushable) => void): void {
  const list = pendingByStore.get(store);
  if (list === undefined) return;
  let failure: unknown;
  // A copy: flushing takes writers off the list.
  for (const entry of list.slice()) {
    try {
      flush(entry.writer);
    } catch (error) {
      failure ??= error;
    }
  }
  if (failure !== undefined) throw failure;
}

/**
 * {@link flushPendingWriters} on the synchronous path, for a store with
 * `commitAsync` that is closing or whose process is exiting: each writer
 * commits its pending batch with the store's `commit`, the commit it has in
 * flight on `commitAsync` included, which the store must have abandoned
 * first (its connection closed, so it never goes in after these; had it
 * gone in already, its appends are found stored and dropped, its updates
 * applied again). Throws the first failure after trying them all.
 *
 * @example
 * ```ts
 * flushSync(): void {
 *   this.pool.destroyConnections(); // the commits in flight are abandoned
 *   flushPendingWritersSync(this);
 * }
 * ```
 */
export function flushPendingWritersSync(store: SessionStoreLike): void {
  flushEach(store, (writer) => (writer.flushSync !== undefined ? writer.flushSync() : writer.flush()));
}

/**
 * {@link flushPendingWriters}, awaiting each writer's commit: on a store
 * with `commitAsync`, the writers' commits run on it and this resolves once
 * they are stored (a writer still committing stays listed until it is
 * done). Throws the first failure after trying them all.
 *
 * @example
 * ```ts
 * async flushAsync(): Promise<void> {
 *   await flushPendingWritersAsync(this);
 * }
 * ```
 */
export async function flushPendingWritersAsync(store: SessionStoreLike): Promise<void> {
  const list = pendingByStore.get(store);
  if (list === undefined) return;
  let failure: unknown;
  for (const entry of list.slice()) {
    try {
      const writer = entry.writer;
      if (writer.flushAsync !== undefined) await writer.flushAsync();
      else writer.flush();
    } catch (error) {
      failure ??= error;
    }
  }
  if (failure !== undefined) throw failure;
}

// The shared writer of each (store, session) in this process. Held weakly:
// a writer nobody uses is collected (one with a pending batch is kept alive
// by the pending list above, so nothing uncommitted is dropped), and its
// entry is removed once it is. A collected writer is simply made again: the
// store holds everything it had committed.
const sharedByStore = new WeakMap<SessionStoreLike, Map<string, WeakRef<object>>>();

interface SharedEntry {
  readonly sessions: Map<string, WeakRef<object>>;
  readonly sessionId: string;
  readonly reference: WeakRef<object>;
}

const collected = new FinalizationRegistry<SharedEntry>(({ sessions, sessionId, reference }) => {
  // A newer writer may have taken the id since: remove only this one's entry.
  if (sessions.get(sessionId) === reference) sessions.delete(sessionId);
});

/**
 * The writer registered for `sessionId` of `store` in this process, if it
 * is still alive.
 * @internal
 */
export function sharedWriter<W extends object>(store: SessionStoreLike, sessionId: string): W | undefined {
  return sharedByStore.get(store)?.get(sessionId)?.deref() as W | undefined;
}

/**
 * Registers `writer` as the writer of `sessionId` of `store` in this
 * process, held weakly.
 * @internal
 */
export function registerSharedWriter(store: SessionStoreLike, sessionId: string, writer: object): void {
  let sessions = sharedByStore.get(store);
  if (sessions === undefined) sharedByStore.set(store, (sessions = new Map()));
  const reference = new WeakRef(writer);
  sessions.set(sessionId, reference);
  collected.register(writer, { sessions, sessionId, reference });
}

/**
 * How many sessions of `store` have a registered writer entry in this
 * process (alive, or collected and not yet swept). For a store's tests: a
 * closed store, or one whose sessions were deleted, holds none.
 *
 * @example
 * ```ts
 * store.close();
 * expect(sharedWriterCount(store)).toBe(0);
 * ```
 */
export function sharedWriterCount(store: SessionStoreLike): number {
  return sharedByStore.get(store)?.size ?? 0;
}

/**
 * Forgets the writers registered for `store`; a store calls it in `close()`
 * after {@link flushPendingWriters}. A writer still held by someone keeps
 * working until it touches the store, which then throws its closed error.
 *
 * @example
 * ```ts
 * close(): void {
 *   flushPendingWriters(this);
 *   releaseSharedWriters(this);
 *   this.pool.end();
 * }
 * ```
 */
export function releaseSharedWriters(store: SessionStoreLike): void {
  sharedByStore.delete(store);
}

/**
 * Forgets the writer registered for `sessionId` of `store`; a store calls it
 * in `deleteSession`, so a session made again under the id gets a fresh
 * writer instead of one holding the deleted session's head.
 *
 * @example
 * ```ts
 * deleteSession(sessionId: string): void {
 *   checkSessionId("MyStore.deleteSession", sessionId);
 *   this.deleteRows(sessionId);
 *   releaseSharedWriter(this, sessionId);
 * }
 * ```
 */
export function releaseSharedWriter(store: SessionStoreLike, sessionId: string): void {
  sharedByStore.get(store)?.delete(sessionId);
}
