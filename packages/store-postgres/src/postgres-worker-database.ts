/**
 * The connection side of the Postgres store's worker: the one `pg` Client
 * of a store (made on the first request, made again after it was lost, with
 * the store's liveness lock), or in pool mode a pooled client per
 * transaction; statements prepared once per connection; transactions that
 * are always closed; and the report of a failure. The other parts of the
 * worker (`postgres-worker.ts` puts them together) run their SQL through it.
 *
 * Started from its source text like the rest of the worker: it uses
 * nothing from the module scope, and imports types only.
 * @internal
 */

import type { PostgresFailure, PostgresPoolData, PostgresWorkerData } from "./postgres-worker-protocol";

/** A row as the worker reads it: column values in order (`rowMode: "array"`). @internal */
export type PostgresWorkerRow = unknown[];

/** The driver's client, as the worker's parts hold it. @internal */
export type PostgresWorkerClient = import("pg").Client;

/** What a statement gives back. @internal */
export interface PostgresQueryResult {
  readonly rows: PostgresWorkerRow[];
  readonly rowCount: number;
}

/** A fault the worker reports by `kind` (see {@link PostgresFailure}). @internal */
export interface PostgresWorkerFault extends Error {
  readonly kind: string;
  readonly data?: unknown;
}

/** What {@link postgresWorkerDatabase} gives the other parts of the worker. @internal */
export interface PostgresWorkerDatabase {
  /** A fault with this `kind`, to throw. */
  fault(kind: string, message: string, data?: unknown): PostgresWorkerFault;
  /** The fault of a session that does not exist. */
  sessionNotFound(sessionId: string): PostgresWorkerFault;
  /** The SQL of the advisory lock key of a store owner id (`$1`), in the one-bigint key space. */
  readonly ownerKey: string;
  /** The store's connection, made (and its liveness lock taken) when there is none. */
  connection(): Promise<PostgresWorkerClient>;
  /** Whether `c` is still the store's connection (not lost since it was handed out). */
  isCurrent(c: PostgresWorkerClient): boolean;
  /** Runs one statement on `c`, rows as arrays; prepared once per connection. */
  query(c: PostgresWorkerClient, text: string, values?: readonly unknown[]): Promise<PostgresQueryResult>;
  /**
   * One statement on the store's connection (a pooled one in pool mode), outside a transaction. It must be safe to
   * run twice (a read, or an update that sets a value): one whose connection turns out dead is run again on a new one.
   */
  run(text: string, values?: readonly unknown[]): Promise<PostgresQueryResult>;
  /**
   * Runs `work` in a transaction, closed (committed or rolled back) before this returns. A `BEGIN` that finds its
   * connection dead is sent again on a new one.
   */
  transaction<T>(work: (c: PostgresWorkerClient) => Promise<T>, isolation?: string): Promise<T>;
  /** Ends the connection; every later request fails as closed. */
  close(): Promise<void>;
  /** Whether the store's own connection is up and holds its liveness lock (other stores then know it alive). */
  live(): boolean;
  /** Whether {@link close} was called. */
  ended(): boolean;
  /** Calls `listener` when the store's own connection is lost, or made without its liveness lock. */
  whenLost(listener: () => void): void;
  /** The report of a failure, as the store's thread types it. */
  failed(error: unknown): PostgresFailure;
}

/**
 * The worker's connection to the database (not connected until the first
 * request). Self-contained: see the file comment.
 * @internal
 */
export function postgresWorkerDatabase(load: (id: string) => unknown, data: PostgresWorkerData | PostgresPoolData): PostgresWorkerDatabase {
  const pg = load(data.pgPath) as typeof import("pg");
  // Pool mode (in the store's thread): transactions take a pooled client each.
  const pool = "pool" in data ? data.pool : undefined;
  type Row = PostgresWorkerRow;
  type Client = PostgresWorkerClient;

  class Fault extends Error {
    constructor(
      readonly kind: string,
      message: string,
      readonly data?: unknown,
    ) {
      super(message);
    }
  }

  // Every query of the store follows keys through indexes. The planner
  // cannot estimate a recursive walk (readAncestry, listBranches) and
  // hashes the whole session for it: 80 ms instead of 1 ms at 100k nodes;
  // and after statistics taken while a table was small (autovacuum may
  // take them at any moment) it scans the table for a commit's key lookups.
  const SETTINGS = `SET lock_timeout = ${Math.max(1, Math.round(data.busyTimeoutMs))}; SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_seqscan = off`;
  if (pool !== undefined) {
    // A pooled connection gets the same lock wait and the same plans.
    pool.on("connect", (pooled) => {
      pooled.query(SETTINGS).catch(() => undefined);
    });
    // An idle pooled connection the server ended reports here; the pool drops it.
    pool.on("error", () => undefined);
  }

  /** How long ending the store's connection waits for the server before closing its socket (see `close`). */
  const END_WAIT_MS = 1_000;
  let client: Client | undefined;
  let closed = false;
  /**
   * Whether the current connection holds this store's liveness lock: a
   * session-level advisory lock on the owner id, which the server releases
   * when the connection ends (the process died, the machine or the network
   * went). Another store that can take it knows this one is gone.
   */
  let ownerLockHeld = false;
  let lost: (() => void) | undefined;
  const OWNER_KEY = "hashtextextended('rein-session-store-owner:' || $1::text, 0)";

  /** Forgets a client whose connection failed; the next request connects anew. */
  function drop(failed: Client): void {
    // A pooled client is released with the error by its transaction, and the pool ends it.
    if (pool !== undefined) return;
    if (client === failed) {
      client = undefined;
      ownerLockHeld = false;
      lost?.();
    }
    failed.removeAllListeners("error");
    failed.on("error", () => undefined);
    void failed.end().catch(() => undefined);
  }

  async function connection(): Promise<Client> {
    if (closed) throw new Fault("closed", "closed");
    if (client !== undefined) {
      // The lock was not free when this connection was made (the backend of
      // the lost one had not ended yet, or a recovering store held it for a
      // moment): take it as soon as it is.
      if (!ownerLockHeld) {
        const current = client;
        const [taken] = (await query(current, `SELECT pg_try_advisory_lock(${OWNER_KEY})`, [data.owner])).rows;
        ownerLockHeld = client === current && taken![0] === true;
      }
      return client;
    }
    const fresh = new pg.Client(data.config);
    // An idle connection the server ended (restart, pg_terminate_backend)
    // reports here: forget it, so the next request connects again.
    fresh.on("error", () => drop(fresh));
    try {
      await fresh.connect();
      await fresh.query(SETTINGS);
    } catch (error) {
      drop(fresh);
      throw error;
    }
    client = fresh;
    ownerLockHeld = await takeOwnerLock(fresh);
    if (!ownerLockHeld) lost?.();
    return fresh;
  }

  /**
   * Takes this store's liveness lock on a new connection, waiting up to
   * lock_timeout: after a lost connection the old backend may still hold it
   * until the server notices, and a store recovering nodes holds it for a
   * moment. Not had in time: false, and the next request tries again.
   */
  async function takeOwnerLock(c: Client): Promise<boolean> {
    try {
      await query(c, `SELECT pg_advisory_lock(${OWNER_KEY})`, [data.owner]);
      return true;
    } catch (error) {
      if ((error as { code?: unknown }).code === "55P03") return false;
      drop(c);
      throw error;
    }
  }

  /** Whether an error leaves the connection unusable (the socket, not the statement, failed). */
  function connectionLost(error: unknown): boolean {
    const code = (error as { code?: unknown }).code;
    if (typeof code !== "string") return true;
    return !/^[0-9A-Z]{5}$/.test(code) || code.startsWith("08") || code.startsWith("57P");
  }

  const prepared = new Map<string, string>();

  async function query(c: Client, text: string, values: readonly unknown[] = []): Promise<{ rows: Row[]; rowCount: number }> {
    let name = prepared.get(text);
    if (name === undefined) prepared.set(text, (name = `rein_${prepared.size}`));
    try {
      const result = await c.query({ name, text, values: values as unknown[], rowMode: "array" });
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
    } catch (error) {
      if (connectionLost(error)) drop(c);
      throw error;
    }
  }

  /**
   * A connection that cannot even roll back is dropped, and the server
   * rolls back when its socket closes.
   */
  async function transaction<T>(work: (c: Client) => Promise<T>, isolation = ""): Promise<T> {
    if (pool !== undefined) return pooledTransaction(pool, work, isolation);
    const c = await onLiveConnection(async () => {
      const current = await connection();
      await query(current, `BEGIN${isolation}`);
      return current;
    });
    try {
      const result = await work(c);
      await query(c, "COMMIT");
      return result;
    } catch (error) {
      if (client === c) {
        try {
          await c.query("ROLLBACK");
        } catch {
          drop(c);
        }
      }
      throw error;
    }
  }

  type PooledClient = Client & { release(error?: Error | boolean): void };

  /**
   * Runs `attempt` (a transaction's BEGIN, or one statement that is safe to
   * run twice) and, when it fails because its connection was already dead
   * — the server restarted, or a proxy cut an idle connection, and the
   * client was not told (or not yet) — once more: the dead connection was
   * dropped, so the second attempt connects anew. Nothing ran on the dead
   * one. A server that is down fails the second attempt too, typed as before.
   */
  async function onLiveConnection<T>(attempt: () => Promise<T>): Promise<T> {
    try {
      return await attempt();
    } catch (error) {
      if (!connectionLost(error)) throw error;
      return attempt();
    }
  }

  /** A client of the pool that has begun a transaction; a dead one is ended and another taken. */
  function pooledBegin(from: import("pg").Pool, isolation: string): Promise<PooledClient> {
    return onLiveConnection(async () => {
      const c = (await from.connect()) as unknown as PooledClient;
      try {
        await query(c, `BEGIN${isolation}`);
      } catch (error) {
        c.release(connectionLost(error) ? true : undefined);
        throw error;
      }
      return c;
    });
  }

  /** {@link transaction} on a client of the pool, released (ended when its connection failed) before this returns. */
  async function pooledTransaction<T>(from: import("pg").Pool, work: (c: Client) => Promise<T>, isolation: string): Promise<T> {
    const c = await pooledBegin(from, isolation);
    let unusable = false;
    try {
      const result = await work(c);
      await query(c, "COMMIT");
      return result;
    } catch (error) {
      unusable = connectionLost(error);
      if (!unusable) await c.query("ROLLBACK").catch(() => (unusable = true));
      throw error;
    } finally {
      c.release(unusable ? true : undefined);
    }
  }

  /** One statement on a client of the pool, released (ended when its connection failed) before this returns. */
  async function pooledQuery(from: import("pg").Pool, text: string, values: readonly unknown[]): Promise<{ rows: Row[]; rowCount: number }> {
    const c = (await from.connect()) as unknown as PooledClient;
    let unusable = false;
    try {
      return await query(c, text, values);
    } catch (error) {
      unusable = connectionLost(error);
      throw error;
    } finally {
      c.release(unusable ? true : undefined);
    }
  }

  return {
    fault: (kind, message, faultData) => new Fault(kind, message, faultData),
    sessionNotFound: (sessionId) => new Fault("session-not-found", "no session", { sessionId }),
    ownerKey: OWNER_KEY,
    connection,
    isCurrent: (c) => client === c,
    query,
    // Pooled (the asynchronous path): a client of the pool per statement, never the store's own connection, which
    // holds the liveness lock the synchronous path already holds (taking it again would wait out lock_timeout).
    // A statement given to run is safe to run twice (a read, or an update that sets a value): one whose connection
    // turns out dead is run once more on a new one (onLiveConnection).
    run: (text, values = []) => onLiveConnection(async () => (pool === undefined ? query(await connection(), text, values) : pooledQuery(pool, text, values))),
    transaction,
    async close(): Promise<void> {
      closed = true;
      const open = client;
      client = undefined;
      if (open !== undefined) {
        open.removeAllListeners("error");
        open.on("error", () => undefined);
        // A stalled server never answers the Terminate message: wait for it at most END_WAIT_MS, then close the
        // socket (the server ends the backend, and frees its locks, once it sees the socket closed).
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<boolean>((done) => (timer = setTimeout(done, END_WAIT_MS, true)));
        const ended = open.end().then(
          () => false,
          () => false,
        );
        if (await Promise.race([ended, late])) open.connection.stream.destroy();
        clearTimeout(timer);
      }
    },
    live: () => !closed && client !== undefined && ownerLockHeld,
    ended: () => closed,
    whenLost(listener: () => void): void {
      lost = listener;
    },
    failed(error: unknown): PostgresFailure {
      if (error instanceof Fault) return { kind: error.kind, message: error.message, data: error.data };
      const { message, code } = error as { message?: unknown; code?: unknown };
      return {
        kind: "pg",
        message: typeof message === "string" ? message : String(error),
        ...(typeof code === "string" ? { code } : {}),
      };
    },
  };
}
