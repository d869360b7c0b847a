import { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { Pool } from "pg";
import { postgresWorker, postgresWorkerParts, type PostgresPoolData, type PostgresPoolWorker } from "./postgres-worker";
import { postgresWorkerOptions } from "./postgres-worker-options";
import { PostgresCallFailure } from "./postgres-faults";
import type { ResolvedPostgresOptions } from "./postgres-store-options";

/**
 * The asynchronous write path of {@link PostgresSessionStore}: commits run
 * on a bounded `pg.Pool` in the store's own thread and are awaited, so the
 * event loop never waits for the database. The transaction is the sync
 * path's own code (the worker's `commit`, run here in pool mode): the same
 * `seq` allocation under the session row's lock, the same lease fences and
 * the same node-conflict rule; a pooled connection gets the worker's
 * connection settings (`postgres-worker-database.ts`).
 * @internal
 */
export class PostgresAsyncWrites {
  private readonly pool: Pool;
  private readonly worker: PostgresPoolWorker;
  /** The pool's open sockets, so {@link abandon} can close them at once. */
  private readonly sockets = new Set<Duplex>();

  /**
   * @param options the store's resolved options (the pool gets the same connection settings).
   * @param owner the store's owner id: nodes appended here are the store's, for `interruptRunning`.
   * @param max the pool's bound: at most this many connections at once.
   */
  constructor(options: ResolvedPostgresOptions, owner: string, max: number) {
    const given = options.config.stream;
    // The socket each connection opens (pg's own choice, or the caller's), kept while open.
    const stream = (): Duplex => {
      const socket = (typeof given === "function" ? given() : given) ?? new Socket();
      this.sockets.add(socket);
      socket.once("close", () => this.sockets.delete(socket));
      return socket;
    };
    const pool = new Pool({ ...options.config, max, stream });
    // A connection that drops while checked out between two queries (abandon() below, a database restart) must not
    // crash the process with an unhandled 'error': the transaction's next query fails, and says so. (The pool's own
    // 'error', for idle connections, is handled by the worker's database part.)
    pool.on("connect", (client) => client.on("error", () => undefined));
    this.pool = pool;
    const data: PostgresPoolData = { ...postgresWorkerOptions(options, owner), pgPath: require.resolve("pg"), pool };
    this.worker = postgresWorker(require, data, postgresWorkerParts)!;
  }

  /** Any of the worker's operations, on a pooled connection. */
  async run(operation: string, ...args: unknown[]): Promise<unknown> {
    try {
      return await this.worker.operations[operation]!(...(args as never[]));
    } catch (error) {
      // As the worker reports it to the sync path, so the store types it the same way (postgresFault).
      throw new PostgresCallFailure(this.worker.failed(error));
    }
  }

  private ended: Promise<void> | undefined;

  /**
   * Closes every connection of the pool now, abandoning the commits in
   * flight: the server rolls back a transaction whose connection is gone,
   * and a commit that had gone in stays (its appends are found stored when
   * committed again). For a store that commits them on its synchronous
   * path instead: when it closes or its process exits.
   */
  abandon(): void {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  /** Ends the pool once the commits in flight are done; every call gets the same promise. */
  end(): Promise<void> {
    return (this.ended ??= this.pool.end());
  }
}
