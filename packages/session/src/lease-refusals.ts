import type { LeaseFence } from "./lease-fence";
import type { LeaseLostError } from "./session-errors";
import type { QueuedOperation } from "./write-queue";

/**
 * The run leases a writer's commits were refused for ({@link LeaseLostError}),
 * by run id: writes made under one of them later are dropped when made,
 * and `flush({ fence })` throws its refusal.
 * @internal
 */
export class LeaseRefusals {
  private lost: Map<string, LeaseLostError> | undefined;

  /** The refusal of `fence`'s lease, when a commit was refused for it. */
  refusal(fence: LeaseFence): LeaseLostError | undefined {
    const refused = this.lost?.get(fence.runId);
    return refused !== undefined && refused.heldEpoch === fence.epoch ? refused : undefined;
  }

  /** Remembers that a commit was refused for `refused`'s lease. */
  remember(refused: LeaseLostError): void {
    (this.lost ??= new Map()).set(refused.runId, refused);
  }
}

/**
 * True for an operation written under the lease `refused` names (its run, at the epoch refused).
 * @internal
 */
export function isWrittenUnder(operation: QueuedOperation, refused: LeaseLostError): boolean {
  return operation.fence?.runId === refused.runId && operation.fence.epoch === refused.heldEpoch;
}

/**
 * The distinct fences of `operations`, or undefined when none is fenced (most commits: no array is made).
 * @internal
 */
export function fencesOf(operations: readonly QueuedOperation[]): LeaseFence[] | undefined {
  let fences: LeaseFence[] | undefined;
  for (const operation of operations) {
    const fence = operation.fence;
    if (fence === undefined) continue;
    if (fences === undefined) fences = [fence];
    else if (!fences.some((known) => known.runId === fence.runId && known.epoch === fence.epoch)) fences.push(fence);
  }
  return fences;
}
