/**
 * @rein/session — Rein's session stores: the {@link SessionStoreLike}
 * contract and its shared test suite, the in-memory and SQLite stores, the
 * node writer, history, graph export and run leases.
 *
 * `@rein/core` (and `rein`) re-export the user-facing names below, so an
 * application imports them from there as before. The second half of this
 * file is the API for store implementers (docs/writing-a-session-store.md):
 * what a store written outside this package needs to behave like the
 * built-in ones. `@rein/store-postgres` uses only that API.
 * @packageDocumentation
 */

// The stores and what users hold of them (re-exported by @rein/core and rein).
export type { SessionNode, SessionNodeRole, SessionNodeStatus } from "./session-node";
export type {
  SessionStoreLike,
  SessionStoreAsyncReads,
  SessionInfo,
  SessionCreateOptions,
  SessionBranch,
  SessionGraphFormat,
  ExportGraphOptions,
  SessionNodeUpdate,
  SessionWriteOperation,
  SessionCommitResult,
  SessionCommitOptions,
} from "./session-store-like";
export type { ReadAncestryOptions } from "./ancestry";
export { SessionStore } from "./session-store";
export { isRunLeaseStore } from "./run-leases";
export { awaitedLeases } from "./awaited-leases";
export type { AwaitedLeaseCalls } from "./awaited-leases";
export { keepLease } from "./lease-renewal";
export type { RenewableLease } from "./lease-renewal";
export type { RunLeaseStore, RunLeaseAsyncCalls, RunRecord, RunState, LeaseFence } from "./run-leases";
export { isConsumeOnceStore } from "./consume-once";
export type { ConsumeOnceStore } from "./consume-once";
export type { SessionStoreOptions } from "./session-store-options";
export { InMemorySessionStore } from "./in-memory-session-store";
export { SessionNodeWriter, ensureSession } from "./session-node-writer";
export type { SessionNodeWriterOptions, SessionWriteBatching } from "./session-node-writer-options";
export type { SessionNodeInput, SessionAppendOptions, SessionUpdateOptions, SessionFlushOptions } from "./session-node-writer";
export { SESSION_COMMIT_FAILED_CHANNEL } from "./commit-failure";
export type { SessionCommitFailure } from "./commit-failure";
export { SessionGraph } from "./session-graph";
export { selectHistory } from "./history";
export type { HistoryFilter, RenderRange, SelectHistoryOptions } from "./history";
export { installShutdownFlush } from "./shutdown-flush";
export {
  SessionStoreError,
  SessionStoreCorruptError,
  ForeignDatabaseError,
  SessionSchemaVersionError,
  SessionNotFoundError,
  SessionExistsError,
  SessionNodeNotFoundError,
  SessionStoreClosedError,
  SessionStoreBusyError,
  SessionStoreReadOnlyError,
  SessionStoreDirectoryError,
  SessionStoreDiskFullError,
  SessionNodeConflictError,
  LeaseLostError,
} from "./session-errors";

// For store implementers (docs/writing-a-session-store.md).
export { describeSessionStoreContract } from "./session-store-contract";
export { flushPendingWriters, flushPendingWritersAsync, flushPendingWritersSync, releaseSharedWriter, releaseSharedWriters, sharedWriterCount } from "./writer-registry";
export { renderSessionGraph } from "./export-graph";
export { jsonProblem } from "./json-value";
export { ancestryIn } from "./ancestry";
export { checkSessionId, checkNodeId, checkCreateSessionArguments, exportGraphOptionsSchema, readAncestryOptionsSchema } from "./session-arguments";
export { runFromRow, checkRunArguments, commitFences } from "./run-leases";
export type { RunRow } from "./run-leases";
export { SyncWorkerBridge, WORKER_SIGNAL } from "./sync-worker-bridge";
export type { SyncWorkerBridgeOptions, WorkerEnds, WorkerFailure, WorkerReply, WorkerRequest } from "./sync-worker-bridge";
/**
 * The option-schema machinery every Rein options object is checked with
 * (`optionsSchema`, `checkArgument`, rules such as `positiveInteger`); one
 * namespace, so its short rule names do not crowd this package's surface.
 * @example
 * ```ts
 * const schema = optionSchema.optionsSchema<{ poolSize?: number }>("MyStore", { poolSize: optionSchema.positiveInteger });
 * schema.parse({ poolSize: 0 }); // TypeError: Invalid MyStore option poolSize: 0 — expected a positive integer
 * ```
 */
export * as optionSchema from "./options/option-schema";
export type { OptionsSchema, Rule, Shape, Problem, ValueKind } from "./options/option-schema";
export { randomIdText } from "./random-id-text";
export { hasUnstorableText, sameJsonWhenStored, storableJson, storableOrNull, storableText } from "./storable-text";
export { MAX_SESSION_ID_LENGTH } from "./session-arguments";
