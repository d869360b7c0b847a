import type { SessionCommitResult, SessionStoreLike } from "./session-store-like";
import { LeaseLostError, SessionNodeConflictError } from "./session-errors";
import type { KeptWrites } from "./kept-writes";
import type { HistoryWindow } from "./history-window";
import { fencesOf, isWrittenUnder, type LeaseRefusals } from "./lease-refusals";
import { removeOperations, type QueuedOperation } from "./write-queue";

/**
 * What a commit that recovers from a refusal touches of its writer: what
 * it drops goes from the kept operations, the pending head and the
 * history window, and a refused lease is remembered.
 * @internal
 */
export interface RecoveringWriter {
  readonly store: SessionStoreLike;
  readonly sessionId: string;
  readonly kept: KeptWrites | undefined;
  pendingHead: string | undefined;
  readonly refusals: LeaseRefusals;
  readonly window: HistoryWindow;
}

/**
 * Commits `operations` for `writer`, with the fences of those written
 * under a run lease. An append whose id the store already holds (a node
 * appended again, from this writer or another process) is dropped and the
 * rest committed: the first version stays, as `append` promises. A refused
 * lease drops every operation written under it, and the rest is committed.
 * Removes the dropped operations from `operations`, in place; throws any
 * other error of the store.
 * @internal
 */
export function commitToStore(writer: RecoveringWriter, operations: QueuedOperation[]): SessionCommitResult {
  for (;;) {
    try {
      const fences = fencesOf(operations);
      return fences === undefined ? writer.store.commit(writer.sessionId, operations) : writer.store.commit(writer.sessionId, operations, { fences });
    } catch (error) {
      if (!recover(writer, operations, error)) return { seqs: new Map() };
    }
  }
}

/**
 * {@link commitToStore} on the store's asynchronous path (`commitAsync`).
 * @internal
 */
export async function commitToStoreAsync(writer: RecoveringWriter, operations: QueuedOperation[]): Promise<SessionCommitResult> {
  for (;;) {
    try {
      const fences = fencesOf(operations);
      return await writer.store.commitAsync!(writer.sessionId, operations, fences === undefined ? undefined : { fences });
    } catch (error) {
      if (!recover(writer, operations, error)) return { seqs: new Map() };
    }
  }
}

/**
 * After a refused commit of `operations`: drops the operations of a
 * refused lease, or the append of an id the store holds, and says whether
 * any are left to commit again; rethrows any other error.
 */
function recover(writer: RecoveringWriter, operations: QueuedOperation[], error: unknown): boolean {
  if (LeaseLostError.isInstance(error)) {
    if (!dropRefused(writer, operations, error)) throw error;
    return operations.length > 0;
  }
  const taken = SessionNodeConflictError.isInstance(error) ? error.nodeId : undefined;
  const index = taken === undefined ? -1 : operations.findIndex((operation) => operation.kind === "append" && operation.id === taken);
  if (index < 0) throw error;
  operations.splice(index, 1);
  writer.kept?.forget(taken!);
  // The window took the version appended again: read it again, with the stored one.
  if (writer.window.has(taken!)) writer.window.drop();
  return operations.length > 0;
}

/**
 * Drops, from `operations` and from the kept ones, every operation
 * written under the refused lease, and remembers the refusal (later
 * writes under it are dropped when made). False when none was found.
 */
function dropRefused(writer: RecoveringWriter, operations: QueuedOperation[], refused: LeaseLostError): boolean {
  const head = writer.pendingHead;
  let droppedHead = false;
  const under = (operation: QueuedOperation): boolean => {
    const dropped = isWrittenUnder(operation, refused);
    if (dropped && operation.id === head) droppedHead = true;
    return dropped;
  };
  if (removeOperations(operations, under) === 0) return false;
  writer.refusals.remember(refused);
  writer.kept?.remove(under);
  if (droppedHead) writer.pendingHead = undefined;
  // The window holds the refused versions: read it again, with the stored ones.
  writer.window.drop();
  return true;
}
