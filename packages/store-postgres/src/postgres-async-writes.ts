import { Pool } from "pg";
import { postgresWorker, type PostgresPoolData } from "./postgres-worker";
import { POSTGRES_MIGRATIONS } from "./postgres-schema";
import { PostgresCallFailure } from "./postgres-faults";
import type { ResolvedPostgresOptions } from "./postgres-store-options";

/**
 * The asynchronous write path of {@link PostgresSessionStore}: commits run
 * on a bounded `pg.Pool` in the store's own thread and are awaited, so the
 * event loop never waits for the database. The transaction is the sync
 * path's own code (the worker's `commit`, run here in pool mode): the same
 * `seq` allocation under the session row's lock, the same lease fences and
 * the same node-conflict rule.
 * @internal
 */
export class PostgresAsyncWrites {
  private readonly pool: Pool;
  private readonly operations: Record<string, (...args: never[]) => Promise<unknown>>;

  /**
   * @param options the store's resolved options (the pool gets the same connection settings).
   * @param owner the store's owner id: nodes appended here are the store's, for `interruptRunning`.
   * @param max the pool's bound: at most this many connections at once.
   */
  constructor(options: ResolvedPostgresOptions, owner: string, max: number) {
    const pool = new Pool({ ...options.config, max });
    const lockTimeout = Math.max(1, Math.round(options.busyTimeoutMs));
    // As the worker's connection: the lock wait the sync path has, and the same plans.
    pool.on("connect", (client) => {
      client.query(`SET lock_timeout = ${lockTimeout}; SET enable_hashjoin = off; SET enable_mergejoin = off`).catch(() => undefined);
    });
    // An idle pooled connection the server ended reports here; the pool drops it.
    pool.on("error", () => undefined);
    this.pool = pool;
    const data: PostgresPoolData = {
      pgPath: require.resolve("pg"),
      config: options.config,
      schema: `"${options.schema}"`,
      schemaName: options.schema,
      busyTimeoutMs: options.busyTimeoutMs,
      migrations: POSTGRES_MIGRATIONS,
      owner,
      pool,
    };
    this.operations = postgresWorker(require, data)!;
  }

  /** The worker's `commit` (encoded operations and fences as it takes them), on a pooled connection. */
  async commit(sessionId: string, encoded: readonly unknown[][], fences: readonly (readonly [string, number])[] | null): Promise<[string, number][]> {
    try {
      return (await this.operations["commit"]!(...([sessionId, encoded, false, fences] as never[]))) as [string, number][];
    } catch (error) {
      // As the worker reports it to the sync path, so the store types it the same way (postgresFault).
      const { kind, message, code, data } = error as { kind?: unknown; message?: unknown; code?: unknown; data?: unknown };
      throw new PostgresCallFailure({
        kind: typeof kind === "string" ? kind : "pg",
        message: typeof message === "string" ? message : String(error),
        ...(typeof code === "string" ? { code } : {}),
        ...(typeof kind === "string" ? { data } : {}),
      });
    }
  }

  private ended: Promise<void> | undefined;

  /** Ends the pool once the commits in flight are done; every call gets the same promise. */
  end(): Promise<void> {
    return (this.ended ??= this.pool.end());
  }
}
