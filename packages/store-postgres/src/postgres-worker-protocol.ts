/**
 * What the Postgres store and its worker tell each other: the data a
 * worker is started with (`SyncWorkerBridge`'s ports, or a `pg.Pool` for
 * the asynchronous path), requests, replies and failures. Types only.
 * @internal
 */

import type { MessagePort } from "node:worker_threads";
import type { ClientConfig, Pool } from "pg";

/** What the worker is started with. @internal */
export interface PostgresWorkerData {
  /** Where `pg` is, resolved by the store's package. */
  readonly pgPath: string;
  /** Connection settings: structured-cloneable values only. */
  readonly config: ClientConfig;
  /** The schema, already quoted as an identifier. */
  readonly schema: string;
  /** The schema name as given (the key of the migration lock). */
  readonly schemaName: string;
  /** `lock_timeout` of every statement, in ms. */
  readonly busyTimeoutMs: number;
  /** Ordered migrations; `{schema}` in their SQL stands for {@link schema}. */
  readonly migrations: readonly { version: number; name: string; sql: string }[];
  /** This store instance's id, recorded on the nodes it appends. */
  readonly owner: string;
  readonly port: MessagePort;
  readonly asyncPort: MessagePort;
  readonly signal: SharedArrayBuffer;
}

/**
 * What the worker's operations are run with in the store's own thread, for
 * the asynchronous path: a bounded `pg.Pool` instead of the ports. Only
 * transactions (`commit`) go through the pool; the operations are awaited
 * directly.
 * @internal
 */
export interface PostgresPoolData extends Omit<PostgresWorkerData, "port" | "asyncPort" | "signal"> {
  readonly pool: Pool;
}

/** A request: `id` 0 is answered on the synchronous port, any other on the async one. @internal */
export interface PostgresRequest {
  readonly id: number;
  readonly op: string;
  readonly args: readonly unknown[];
}

/**
 * A failure as the worker reports it: `kind` names a Rein fault, or is
 * `"pg"` for an error of the driver or the server (`code`: its SQLSTATE or
 * the socket's errno code).
 * @internal
 */
export interface PostgresFailure {
  readonly kind: string;
  readonly message: string;
  readonly code?: string;
  readonly data?: unknown;
}

/** A reply to a {@link PostgresRequest}. @internal */
export interface PostgresReply {
  readonly id: number;
  readonly value?: unknown;
  readonly failure?: PostgresFailure;
}

/** One store operation of the worker, by request name; its arguments as the request carries them. @internal */
export type PostgresOperation = (...args: never[]) => Promise<unknown>;
