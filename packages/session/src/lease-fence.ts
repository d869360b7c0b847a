/**
 * The lease a write of a resumable run is made under: the run and the
 * epoch of the lease its worker holds. A store verifies it in the same
 * transaction as the write and refuses the whole write with a
 * `LeaseLostError` when the run's current epoch is another (the run
 * was claimed since), so a worker that lost its lease cannot overwrite what
 * the new holder wrote.
 * @example
 * ```ts
 * store.commit("s1", [{ kind: "update", id: runId, fields: { output: "done" } }], { fences: [{ runId, epoch: 2 }] });
 * ```
 */
export interface LeaseFence {
  /** The run (its code node id). */
  readonly runId: string;
  /** The lease epoch the writer holds (`RunRecord.leaseEpoch` when it registered or claimed the run). */
  readonly epoch: number;
}
