/**
 * The parts of `@rein/core` a store needs (`sessionStoreKit`): the
 * per-process writer registry (a store commits its writers' pending batches
 * on `flush`/`close` and forgets them on `deleteSession`/`close`), the graph
 * renderer shared by every store's `exportGraph`, and the argument checks
 * every store applies.
 * @internal
 */
import { sessionStoreKit } from "@rein/core";

type Kit = typeof sessionStoreKit;

// Typed through `typeof sessionStoreKit`: core's internal modules are not importable (exports map).
export const flushPendingWriters: Kit["flushPendingWriters"] = sessionStoreKit.flushPendingWriters;
export const releaseSharedWriter: Kit["releaseSharedWriter"] = sessionStoreKit.releaseSharedWriter;
export const releaseSharedWriters: Kit["releaseSharedWriters"] = sessionStoreKit.releaseSharedWriters;
export const renderSessionGraph: Kit["renderSessionGraph"] = sessionStoreKit.renderSessionGraph;
export const checkSessionId: Kit["checkSessionId"] = sessionStoreKit.checkSessionId;
export const checkNodeId: Kit["checkNodeId"] = sessionStoreKit.checkNodeId;
export const checkCreateSessionArguments: Kit["checkCreateSessionArguments"] = sessionStoreKit.checkCreateSessionArguments;
export const exportGraphOptionsSchema: Kit["exportGraphOptionsSchema"] = sessionStoreKit.exportGraphOptionsSchema;
export const readAncestryOptionsSchema: Kit["readAncestryOptionsSchema"] = sessionStoreKit.readAncestryOptionsSchema;
export const runFromRow: Kit["runFromRow"] = sessionStoreKit.runFromRow;
export const checkRunArguments: Kit["checkRunArguments"] = sessionStoreKit.checkRunArguments;
export const commitFences: Kit["commitFences"] = sessionStoreKit.commitFences;
