export type { SessionNode, SessionNodeRole, SessionNodeStatus } from "./session-node";
export type {
  SessionStoreLike,
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
export type { RunLeaseStore, RunRecord, RunState, LeaseFence } from "./run-leases";
export { isConsumeOnceStore } from "./consume-once";
export type { ConsumeOnceStore } from "./consume-once";
export type { SessionStoreOptions } from "./session-store-options";
export { InMemorySessionStore } from "./in-memory-session-store";
export { SessionNodeWriter } from "./session-node-writer";
export type { SessionNodeWriterOptions, SessionWriteBatching } from "./session-node-writer-options";
export type {
  SessionNodeInput,
  SessionAppendOptions,
  SessionUpdateOptions,
  SessionFlushOptions,
} from "./session-node-writer";
export { SESSION_COMMIT_FAILED_CHANNEL } from "./commit-failure";
export type { SessionCommitFailure } from "./commit-failure";
export { SessionGraph } from "./session-graph";
export { selectHistory } from "./history";
export type { HistoryFilter, RenderRange, SelectHistoryOptions } from "./history";
export { installShutdownFlush } from "./shutdown-flush";
export { sessionStoreKit } from "./store-kit";
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
