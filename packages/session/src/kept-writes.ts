import { removeOperations, type QueuedOperation } from "./write-queue";

/** The first retry of kept operations waits this long (ms); each next one twice as long. */
const FIRST_RETRY_MS = 10;
/** Retries of kept operations are never further apart than this (ms). */
const MAX_RETRY_MS = 5_000;

/**
 * Operations of a writer whose commit failed, kept in order until a commit
 * takes them, with what their retry needs: the last error, the head they
 * would make, and the retry timer. Updates of their ids fold into them, as
 * into the queue ({@link get}).
 * @internal
 */
export class KeptWrites {
  /** The kept operations, in the order written. */
  readonly operations: QueuedOperation[] = [];
  /** The last error their commit failed with. */
  error: unknown;
  /** The last top-level node among them: it would become the head when they are committed. */
  headId: string | undefined;
  /** The last top-level node the writer committed while they were kept: it stays the head. */
  supersededBy: string | undefined;
  private readonly index = new Map<string, QueuedOperation>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private delay = FIRST_RETRY_MS / 2;

  /** @param error what the commit failed with. */
  constructor(error: unknown) {
    this.error = error;
  }

  /** The kept operation of `id`. */
  get(id: string): QueuedOperation | undefined {
    return this.index.get(id);
  }

  /** True when an operation of `id` is kept. */
  has(id: string): boolean {
    return this.index.has(id);
  }

  /** Keeps `operations` (after those already kept), failed with `error`. */
  add(operations: readonly QueuedOperation[], error: unknown): void {
    this.error = error;
    for (const operation of operations) {
      this.operations.push(operation);
      this.index.set(operation.id, operation);
      if (operation.kind === "append" && operation.node.caller === null) this.headId = operation.id;
    }
  }

  /** Forgets the kept operation of `id` (the store will never take it). */
  forget(id: string): void {
    this.index.delete(id);
  }

  /** Drops, in place and in order, the kept operations `test` picks. */
  remove(test: (operation: QueuedOperation) => boolean): void {
    removeOperations(this.operations, (operation) => {
      const removed = test(operation);
      if (removed) this.index.delete(operation.id);
      return removed;
    });
  }

  /** `operations` were committed while these stayed kept: their last top-level node stays the head. */
  supersede(operations: readonly QueuedOperation[]): void {
    for (const operation of operations) {
      if (operation.kind === "append" && operation.node.caller === null) this.supersededBy = operation.id;
    }
  }

  /**
   * Runs `retry` from a timer ({@link FIRST_RETRY_MS}, doubling up to
   * {@link MAX_RETRY_MS}) unless one is set already. The timer does not
   * keep the process alive.
   */
  retryLater(retry: () => void): void {
    if (this.timer !== undefined) return;
    this.delay = Math.min(this.delay * 2, MAX_RETRY_MS);
    const timer = setTimeout(() => {
      this.timer = undefined;
      retry();
    }, this.delay);
    timer.unref?.();
    this.timer = timer;
  }

  /** Cancels the planned retry: they were committed. */
  stopRetry(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
  }
}
