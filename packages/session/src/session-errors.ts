/**
 * Every session-store error, in one list for the store's modules and the
 * package index: the base ({@link SessionStoreError}), the faults of the
 * storage (`session-storage-errors.ts`) and those about a record
 * (`session-record-errors.ts`).
 */
export { SessionStoreError } from "./session-store-error";
export {
  SessionStoreCorruptError,
  ForeignDatabaseError,
  SessionSchemaVersionError,
  SessionStoreBusyError,
  SessionStoreReadOnlyError,
  SessionStoreDirectoryError,
  SessionStoreDiskFullError,
} from "./session-storage-errors";
export {
  SessionNotFoundError,
  SessionExistsError,
  SessionNodeNotFoundError,
  SessionStoreClosedError,
  SessionNodeConflictError,
  LeaseLostError,
} from "./session-record-errors";
