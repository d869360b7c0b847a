import type { PostgresConnectionOptions } from "./postgres-connection";
import { POSTGRES_MIGRATIONS } from "./postgres-schema";
import type { ResolvedPostgresOptions } from "./postgres-store-options";

/**
 * What a store tells its worker (`postgres-worker.ts`), from the store's
 * resolved options: the same for the worker thread of the synchronous path
 * and the pool of the asynchronous one.
 * @param owner the store instance's id, recorded on the nodes it appends.
 * @internal
 */
export function postgresWorkerOptions(options: ResolvedPostgresOptions, owner: string): PostgresConnectionOptions {
  return {
    config: options.config,
    schema: `"${options.schema}"`,
    schemaName: options.schema,
    busyTimeoutMs: options.busyTimeoutMs,
    migrations: POSTGRES_MIGRATIONS,
    owner,
  };
}
