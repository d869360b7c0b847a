import type { ClientConfig } from "pg";

/**
 * Connection settings of a {@link PostgresSessionStoreOptions.pool}: pg's
 * `ClientConfig` / `PoolConfig` fields, as plain values. The connection
 * lives in the store's worker thread, so nothing that cannot be copied to
 * another thread is accepted: no `password` function, no `stream` factory,
 * no custom `types`.
 * @example
 * ```ts
 * const pool: PostgresConnectionConfig = { host: "db", port: 5432, user: "rein", password: process.env.PGPASSWORD, database: "app" };
 * ```
 */
export type PostgresConnectionConfig = Omit<ClientConfig, "password" | "stream" | "types"> & { password?: string };

/**
 * Options of {@link PostgresSessionStore}. Pass `connectionString` or
 * `pool` (not both); with neither, pg reads `PGHOST`, `PGPORT`, `PGUSER`,
 * `PGPASSWORD` and `PGDATABASE`.
 * @example
 * ```ts
 * new PostgresSessionStore({ connectionString: "postgres://rein:secret@db:5432/app", schema: "rein" });
 * new PostgresSessionStore({ pool: { host: "db", user: "rein", password: "secret", database: "app" } });
 * ```
 */
export interface PostgresSessionStoreOptions {
  /** A `postgres://user:password@host:port/database` URL (pg's format, `?sslmode=` and all). */
  connectionString?: string;
  /**
   * Connection settings as an object (pg's `PoolConfig` / `ClientConfig`
   * fields). Not a `pg.Pool`: a pool cannot cross into the store's worker
   * thread, which holds one connection of its own; pass the settings you
   * would give the pool. Pool-only fields (`max`, `idleTimeoutMillis`, …)
   * are ignored.
   */
  pool?: PostgresConnectionConfig & Record<string, unknown>;
  /**
   * The schema that holds the store's tables; created when missing. Stores
   * (and servers) that share a schema share their sessions.
   * @default "rein"
   */
  schema?: string;
  /**
   * How long a statement waits for a row lock held by another connection
   * (PostgreSQL `lock_timeout`) before the call fails with
   * `SessionStoreBusyError`; {@link PostgresSessionStore.commitWithRetry}
   * retries for as long again.
   * @default 5000
   */
  busyTimeoutMs?: number;
  /**
   * Milliseconds to wait for a connection to be established (pg's
   * `connectionTimeoutMillis`) before the call fails with
   * `PostgresConnectionError`.
   * @default 5000
   */
  connectTimeoutMs?: number;
  /**
   * Milliseconds a request may take, server side (`statement_timeout`) and
   * client side (pg's `query_timeout`): a server that stops answering fails
   * the call instead of blocking the process for ever.
   * @default 30000
   */
  requestTimeoutMs?: number;
  /**
   * Commit pending writes and mark running nodes interrupted on SIGINT,
   * SIGTERM and `process.exit` (core's `installShutdownFlush`).
   * @default true
   */
  shutdownFlush?: boolean;
  /**
   * Turns on the asynchronous write path: `commitAsync`, on a `pg.Pool` of
   * at most `poolSize` connections in the store's own thread. A
   * `SessionNodeWriter` on the store then commits its batches with it and
   * never blocks the event loop on a write (await `writer.flushAsync()` or
   * `store.flushAsync()` where a write must be durable; `closeAsync()`
   * waits for every queued write). `true` is `{ poolSize: 4 }`.
   * @default false: every write waits for the store's worker (synchronous)
   */
  asyncWrites?: boolean | { poolSize?: number };
}

const KNOWN = ["connectionString", "pool", "schema", "busyTimeoutMs", "connectTimeoutMs", "requestTimeoutMs", "shutdownFlush", "asyncWrites"] as const;

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  if (typeof value === "object") return `an object (${(value as object).constructor?.name ?? "null prototype"})`;
  return `${typeof value} ${String(value)}`;
}

function fail(option: string, expected: string, value: unknown): never {
  throw new TypeError(`PostgresSessionStore: option '${option}' must be ${expected}, got ${describe(value)}.`);
}

function milliseconds(options: PostgresSessionStoreOptions, option: "busyTimeoutMs" | "connectTimeoutMs" | "requestTimeoutMs", fallback: number): number {
  const value = options[option];
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) fail(option, "a positive number of milliseconds", value);
  return value;
}

/** Whether a value survives `structuredClone` into the worker as plain data. */
function plainData(value: unknown, depth = 0): boolean {
  if (value === null || value === undefined) return true;
  const type = typeof value;
  if (type === "string" || type === "number" || type === "boolean") return true;
  if (type !== "object" || depth > 4) return false;
  if (Buffer.isBuffer(value)) return true;
  if (Array.isArray(value)) return value.every((item) => plainData(item, depth + 1));
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  return Object.values(value as object).every((item) => plainData(item, depth + 1));
}

/** The checked options, with defaults. @internal */
export interface ResolvedPostgresOptions {
  readonly config: ClientConfig;
  readonly schema: string;
  readonly location: string;
  readonly busyTimeoutMs: number;
  readonly shutdownFlush: boolean;
  /** The bound of the asynchronous path's pool, or undefined when the path is off. */
  readonly asyncPoolSize: number | undefined;
}

/** `postgres://host:port/database (schema s)`: where the store is, never with a password. */
function locationOf(config: PostgresConnectionConfig, schema: string): string {
  let host = config.host ?? process.env["PGHOST"] ?? "localhost";
  let port = String(config.port ?? process.env["PGPORT"] ?? 5432);
  let database = config.database ?? process.env["PGDATABASE"] ?? config.user ?? process.env["PGUSER"] ?? "postgres";
  if (config.connectionString !== undefined) {
    try {
      const url = new URL(config.connectionString);
      host = decodeURIComponent(url.hostname) || url.searchParams.get("host") || host;
      port = url.port || port;
      database = decodeURIComponent(url.pathname.replace(/^\//, "")) || database;
    } catch {
      // Not a URL (e.g. "socket:/run/postgresql"): show it without anything that looks like a password.
      return `${config.connectionString.replace(/:[^:@/]*@/, ":***@").replace(/password=[^&\s]*/gi, "password=***")} (schema ${schema})`;
    }
  }
  return `postgres://${host}:${port}/${database} (schema ${schema})`;
}

/**
 * Checks the options of `new PostgresSessionStore(...)` and resolves them;
 * every problem is a `TypeError` naming the option.
 * @internal
 */
export function resolvePostgresOptions(options: PostgresSessionStoreOptions): ResolvedPostgresOptions {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError(`PostgresSessionStore: options must be an object such as { connectionString }, got ${describe(options)}.`);
  }
  for (const key of Object.keys(options)) {
    if (!(KNOWN as readonly string[]).includes(key)) {
      throw new TypeError(`PostgresSessionStore: unknown option '${key}'. Known options: ${KNOWN.join(", ")}.`);
    }
  }
  if (options.connectionString !== undefined && options.pool !== undefined) {
    throw new TypeError("PostgresSessionStore: cannot provide both connectionString and pool; pass one of them.");
  }
  const { connectionString, pool } = options;
  if (connectionString !== undefined && (typeof connectionString !== "string" || connectionString === "")) {
    fail("connectionString", "a non-empty string such as 'postgres://user:password@host:5432/database'", connectionString);
  }
  if (pool !== undefined) {
    if (typeof pool !== "object" || pool === null || Array.isArray(pool)) fail("pool", "an object of connection settings", pool);
    if (typeof (pool as { connect?: unknown }).connect === "function" || typeof (pool as { query?: unknown }).query === "function") {
      throw new TypeError(
        "PostgresSessionStore: option 'pool' must be connection settings (pg's PoolConfig), not a pg.Pool or pg.Client: " +
          "the store's connection lives in a worker thread that a pool cannot enter. Pass the settings you gave the pool, or { connectionString }.",
      );
    }
    for (const [key, value] of Object.entries(pool)) {
      if (!plainData(value)) {
        fail(`pool.${key}`, "plain data (a string, number, boolean, Buffer or an object of those): the settings are copied into the store's worker thread", value);
      }
    }
  }
  const schema = options.schema ?? "rein";
  if (typeof schema !== "string" || !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) {
    fail("schema", "a PostgreSQL identifier: letters, digits and _, not starting with a digit, at most 63 characters", schema);
  }
  if (options.shutdownFlush !== undefined && typeof options.shutdownFlush !== "boolean") fail("shutdownFlush", "true or false", options.shutdownFlush);
  const busyTimeoutMs = milliseconds(options, "busyTimeoutMs", 5000);
  const connectTimeoutMs = milliseconds(options, "connectTimeoutMs", 5000);
  const requestTimeoutMs = milliseconds(options, "requestTimeoutMs", 30_000);
  const settings: PostgresConnectionConfig = connectionString !== undefined ? { connectionString } : { ...(pool ?? {}) };
  const config: ClientConfig = {
    application_name: "rein-session-store",
    keepAlive: true,
    ...settings,
    connectionTimeoutMillis: connectTimeoutMs,
    statement_timeout: requestTimeoutMs,
    query_timeout: requestTimeoutMs + 1000,
  };
  const asyncWrites = options.asyncWrites;
  let asyncPoolSize: number | undefined;
  if (asyncWrites === true) asyncPoolSize = 4;
  else if (asyncWrites !== undefined && asyncWrites !== false) {
    const size = typeof asyncWrites === "object" && asyncWrites !== null ? (asyncWrites.poolSize ?? 4) : Number.NaN;
    if (!Number.isInteger(size) || size < 1 || size > 100) fail("asyncWrites", "true, false or { poolSize: an integer from 1 to 100 }", asyncWrites);
    asyncPoolSize = size;
  }
  return { config, schema, location: locationOf(settings, schema), busyTimeoutMs, shutdownFlush: options.shutdownFlush ?? true, asyncPoolSize };
}
