/**
 * The parts of `@rein/core` a store needs (`sessionStoreKit`): the
 * per-process writer registry (a store commits its writers' pending batches
 * on `flush`/`close` and forgets them on `deleteSession`/`close`), the graph
 * renderer shared by every store's `exportGraph`, and the argument checks
 * every store applies.
 * @internal
 */
import { sessionStoreKit } from "@rein/core";

export const {
  flushPendingWriters,
  releaseSharedWriter,
  releaseSharedWriters,
  renderSessionGraph,
  checkSessionId,
  checkNodeId,
  checkCreateSessionArguments,
  exportGraphOptionsSchema,
  readAncestryOptionsSchema,
} = sessionStoreKit;
