import type { SessionNodeUpdate } from "./session-store-like";
import type { SessionGraph } from "./session-graph";
import type { LeaseFence } from "./lease-fence";
import type { QueuedAppend } from "./node-json";
import { applyUpdate } from "./node-update";

/**
 * A queued update; later updates of the same id fold into it.
 * @internal
 */
export interface QueuedUpdate {
  readonly kind: "update";
  readonly id: string;
  fields: SessionNodeUpdate;
  /** The run lease the update is made under (see `SessionUpdateOptions.fence`). */
  fence: LeaseFence | undefined;
}

/**
 * What a `SessionNodeWriter` queues: the store sees these as `SessionWriteOperation`s.
 * @internal
 */
export type QueuedOperation = QueuedAppend | QueuedUpdate;

/** Batches up to this many operations are searched by a scan; larger ones get an index. */
const SCAN_LIMIT = 16;

/**
 * A writer's batch: the operations written since the last commit started,
 * in order, at most one per id (a later update folds into it). The writer
 * remembers no id beyond it: a committed id is the store's (or the history
 * window's) to know, so the writer's memory is bounded by one batch.
 * @internal
 */
export class WriteQueue {
  private queued: QueuedOperation[] = [];
  /** The batch by id, made once it outgrows a scan (see {@link find}); dropped with the batch. */
  private index: Map<string, QueuedOperation> | undefined;

  /** How many operations are queued. */
  get length(): number {
    return this.queued.length;
  }

  /** The queued operations, in the order written. */
  get operations(): readonly QueuedOperation[] {
    return this.queued;
  }

  /**
   * The queued operation of `id`. A batch is usually a handful of
   * operations (the runtime commits after every model request), and a scan
   * from the end costs less than keeping a map per batch; a batch past
   * {@link SCAN_LIMIT} gets an index, so a large one stays linear.
   */
  find(id: string): QueuedOperation | undefined {
    if (this.index !== undefined) return this.index.get(id);
    const queued = this.queued;
    for (let index = queued.length - 1; index >= 0; index--) if (queued[index]!.id === id) return queued[index];
    return undefined;
  }

  /** Queues `operation`; returns how many are queued now. */
  push(operation: QueuedOperation): number {
    const length = this.queued.push(operation);
    if (this.index !== undefined) this.index.set(operation.id, operation);
    else if (length > SCAN_LIMIT) this.index = new Map(this.queued.map((queued) => [queued.id, queued]));
    return length;
  }

  /** Hands over the batch to be committed and starts a new one. */
  take(): QueuedOperation[] {
    const taken = this.queued;
    this.queued = [];
    this.index = undefined;
    return taken;
  }
}

/**
 * Applies queued operations to a graph being built: appends are added, an
 * update replaces the node it updates when the graph holds it.
 * @internal
 */
export function addOperations(graph: SessionGraph, operations: readonly QueuedOperation[]): void {
  for (const operation of operations) {
    if (operation.kind === "append") graph.add(operation.node);
    else {
      const current = graph.get(operation.id);
      if (current !== undefined) graph.replace(applyUpdate(current, operation.fields));
    }
  }
}

/**
 * Removes, in place and in order, the operations `test` picks; returns how many it removed.
 * @internal
 */
export function removeOperations(operations: QueuedOperation[], test: (operation: QueuedOperation) => boolean): number {
  let kept = 0;
  for (const operation of operations) if (!test(operation)) operations[kept++] = operation;
  const removed = operations.length - kept;
  operations.length = kept;
  return removed;
}
