/**
 * What crosses between the SQLite store and its worker thread: the data the
 * worker starts with, requests, replies and failures, and the shape of the
 * operations its loop runs (`sqlite-worker-loop.ts`). Types only: the
 * worker's functions are started from their source text and may import
 * nothing but types.
 * @internal
 */

import type { MessagePort } from "node:worker_threads";

/** What the worker is started with. @internal */
export interface SqliteWorkerData {
  readonly libsqlPath: string;
  readonly location: string;
  /** busy_timeout of one attempt to take the write lock, in ms. */
  readonly attemptTimeoutMs: number;
  /**
   * busy_timeout while opening (reading the schema, switching to WAL, migrating), in ms: the store's
   * `busyTimeoutMs`. Several processes opening one new file at once wait for the one creating the schema.
   */
  readonly openTimeoutMs: number;
  readonly migrations: readonly { version: number; name: string; sql: string }[];
  readonly applicationId: number;
  readonly ownerHost: string;
  readonly ownerPid: number;
  readonly ownerStore: string;
  readonly port: MessagePort;
  readonly asyncPort: MessagePort;
  readonly signal: SharedArrayBuffer;
}

/** A request: `id` 0 is answered on the synchronous port, any other on the async one. @internal */
export interface SqliteRequest {
  readonly id: number;
  readonly op: string;
  readonly args: readonly unknown[];
}

/** A failure as the worker reports it; `kind` names a Rein fault, else it is an SQLite error. @internal */
export interface SqliteFailure {
  readonly kind: string;
  readonly message: string;
  readonly code?: string;
  readonly rawCode?: number;
  readonly data?: unknown;
}

/** A reply to a {@link SqliteRequest}. @internal */
export interface SqliteReply {
  readonly id: number;
  readonly value?: unknown;
  readonly failure?: SqliteFailure;
}

/**
 * An append as sent to the worker: `["a", id, createdAt, role, name, input,
 * output, caller, predecessor, metadata, status]`, values as JSON text.
 * An update: `["u", id, name | null, hasInput, input, hasOutput, output,
 * metadataSet | null, metadataRemove | null]`.
 * @internal
 */
export type EncodedOperation = readonly unknown[];

/** What the worker's loop runs requests with. @internal */
export interface SqliteOperations {
  /** Runs one operation; throws what went wrong. */
  run(op: string, args: readonly unknown[]): unknown;
  /** The report of a failure; forgets the prepared statements, which may be left mid-run. */
  failed(error: unknown): SqliteFailure;
  /** Called when no request waits: background work (the WAL checkpoint) that no caller should wait for. */
  idle(): void;
}

/** What the worker's commit answers: `[seqs, headId, stamp]`. @internal */
export type SqliteCommitReply = [[string, number][], string | null, string | null];

/** One worker operation: the request's `op` names it, its `args` are spread into it. @internal */
export type SqliteOperation = (...args: never[]) => unknown;
