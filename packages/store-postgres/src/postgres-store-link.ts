import { SessionStoreClosedError } from "@rein/session";
import { PostgresConnection } from "./postgres-connection";
import { postgresFault } from "./postgres-faults";
import type { ResolvedPostgresOptions } from "./postgres-store-options";
import { postgresWorkerOptions } from "./postgres-worker-options";

/**
 * A {@link PostgresSessionStore}'s way to its worker: the
 * {@link PostgresConnection}, started anew when the last one ended (it
 * checks the schema again when it connects); calls refused once the store
 * is closed; and every failure typed for the store (`postgresFault`).
 * @internal
 */
export class PostgresStoreLink {
  private connection: PostgresConnection;
  private closedAlready = false;

  /**
   * Starts the worker and opens the store (creates or checks the schema);
   * a failure is thrown typed, with the worker ended.
   * @param owner the store instance's id (see `PostgresSessionStore`).
   */
  constructor(
    private readonly options: ResolvedPostgresOptions,
    private readonly owner: string,
  ) {
    this.connection = this.connect();
    try {
      this.connection.call("open");
    } catch (error) {
      this.connection.close();
      throw this.fault(error, 0);
    }
  }

  /** True once {@link markClosed} was called. */
  get closed(): boolean {
    return this.closedAlready;
  }

  /** From now on every call throws `SessionStoreClosedError`. */
  markClosed(): void {
    this.closedAlready = true;
  }

  /** Throws `SessionStoreClosedError` once the store is closed. */
  assertOpen(): void {
    if (this.closedAlready) throw new SessionStoreClosedError(this.options.location);
  }

  /** Runs `op` in the worker and waits for it (the event loop waits too); a failure is thrown typed. */
  call(op: string, ...args: unknown[]): unknown {
    this.assertOpen();
    const started = Date.now();
    try {
      return this.live().call(op, ...args);
    } catch (error) {
      throw this.fault(error, Date.now() - started);
    }
  }

  /** Runs `op` in the worker without blocking the event loop; a failure rejects untyped (see {@link fault}). */
  callAsync(op: string, ...args: unknown[]): Promise<unknown> {
    return this.live().callAsync(op, ...args);
  }

  /** The typed error of a failed call that waited `waitedMs`. */
  fault(error: unknown, waitedMs: number): Error {
    return postgresFault(error, { location: this.options.location, schema: this.options.schema, waitedMs });
  }

  /** Ends the worker's connection; a worker already gone is no fault. */
  end(): void {
    try {
      this.connection.close();
    } catch {
      /* the worker is gone, and its connection with it */
    }
  }

  /** {@link end} without blocking the event loop. */
  async endAsync(): Promise<void> {
    await this.connection.closeAsync().catch(() => undefined);
  }

  private connect(): PostgresConnection {
    return new PostgresConnection(postgresWorkerOptions(this.options, this.owner));
  }

  /** The worker, started anew if the last one ended (it checks the schema again when it connects). */
  private live(): PostgresConnection {
    if (this.connection.ended) {
      this.connection = this.connect();
      this.connection.call("open");
    }
    return this.connection;
  }
}
