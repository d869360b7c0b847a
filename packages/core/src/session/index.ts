/**
 * The session stores live in `@rein/session`; core re-exports the names its
 * users import (the same objects), so `import { SessionStore } from
 * "@rein/core"` keeps working. The API for store implementers is exported by
 * `@rein/session` only.
 */
export type { SessionNode, SessionNodeRole, SessionNodeStatus } from "@rein/session";
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
} from "@rein/session";
export type { ReadAncestryOptions } from "@rein/session";
export { SessionStore } from "@rein/session";
export { isRunLeaseStore, awaitedLeases } from "@rein/session";
export type { AwaitedLeaseCalls } from "@rein/session";
export type { RunLeaseStore, RunLeaseAsyncCalls, RunRecord, RunState, LeaseFence } from "@rein/session";
export { isConsumeOnceStore } from "@rein/session";
export type { ConsumeOnceStore } from "@rein/session";
export type { SessionStoreOptions } from "@rein/session";
export { InMemorySessionStore } from "@rein/session";
export { SessionNodeWriter } from "@rein/session";
export type { SessionNodeWriterOptions, SessionWriteBatching } from "@rein/session";
export type {
  SessionNodeInput,
  SessionAppendOptions,
  SessionUpdateOptions,
  SessionFlushOptions,
} from "@rein/session";
export { SESSION_COMMIT_FAILED_CHANNEL } from "@rein/session";
export type { SessionCommitFailure } from "@rein/session";
export { SessionGraph } from "@rein/session";
export { selectHistory } from "@rein/session";
export type { HistoryFilter, RenderRange, SelectHistoryOptions } from "@rein/session";
export { installShutdownFlush } from "@rein/session";
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
} from "@rein/session";
