import { flushPendingWriters, releaseSharedWriter, releaseSharedWriters } from "./writer-registry";
import { renderSessionGraph } from "./export-graph";
import { ancestryIn } from "./ancestry";
import { checkRunArguments, commitFences, runFromRow } from "./run-leases";
import {
  checkCreateSessionArguments,
  checkNodeId,
  checkSessionId,
  exportGraphOptionsSchema,
  readAncestryOptionsSchema,
} from "./session-arguments";

/**
 * What a session store written outside `@rein/core` needs to behave like
 * the built-in ones (`@rein/store-postgres` uses it):
 *
 * - the per-process writer registry: `flush()` and `close()` commit the
 *   pending batches of the store's writers (`flushPendingWriters`);
 *   `deleteSession` and `close` forget their writers
 *   (`releaseSharedWriter`, `releaseSharedWriters`);
 * - `renderSessionGraph(session, nodes, format)`, the JSON / Mermaid / dot
 *   rendering every store's `exportGraph` returns;
 * - `ancestryIn(graph, nodeId, options)`, the reference `readAncestry`;
 * - the argument checks every store applies, so a wrong argument is the
 *   same `TypeError` whichever store is used;
 * - for a {@link RunLeaseStore}: `runFromRow` (a run row
 *   `[runId, sessionId, name, state, reason, owned, leaseUntil, updatedAt,
 *   createdAt, leaseEpoch]` as a {@link RunRecord}) and `checkRunArguments`;
 * - for a fenced commit: `commitFences(where, options)`, the checked
 *   `options.fences` of a commit (the store then refuses the commit with a
 *   `LeaseLostError` when a fenced run's lease epoch is another).
 *
 * @example
 * ```ts
 * import { sessionStoreKit } from "@rein/core";
 * class MyStore implements SessionStoreLike {
 *   flush(): void {
 *     sessionStoreKit.flushPendingWriters(this);
 *   }
 *   // ...
 * }
 * ```
 */
export const sessionStoreKit = Object.freeze({
  flushPendingWriters,
  releaseSharedWriter,
  releaseSharedWriters,
  renderSessionGraph,
  ancestryIn,
  checkSessionId,
  checkNodeId,
  checkCreateSessionArguments,
  exportGraphOptionsSchema,
  readAncestryOptionsSchema,
  runFromRow,
  checkRunArguments,
  commitFences,
});
