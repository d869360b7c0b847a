import type { ApiKeyStore } from "@rein/server";
import type { SessionStoreLike } from "rein";
import { CliUsageError } from "./exit-codes";

/** @internal Whether a `--store` value names a Postgres database rather than a SQLite file. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//.test(location);
}

/**
 * @internal A `PostgresSessionStore` on `url` (every command's `--store
 * postgres://…`): `@rein/store-postgres` is loaded only then, and a missing
 * install is a usage error saying what to install. `shutdownFlush`: the
 * store's own SIGINT/SIGTERM handler marks running nodes interrupted (`rein
 * run`'s child); a server or worker settles the store itself. `asyncWrites`:
 * commits and lease renewals on a pool, never blocking the event loop
 * (`rein serve` and `rein worker`, long-lived processes that answer others).
 */
export function openPostgresStore(url: string, options: { shutdownFlush?: boolean; asyncWrites?: boolean } = {}): SessionStoreLike & { close(): void } {
  let module: {
    PostgresSessionStore: new (options: { connectionString: string; shutdownFlush?: boolean; asyncWrites?: boolean }) => SessionStoreLike & { close(): void };
  };
  try {
    module = require("@rein/store-postgres") as typeof module;
  } catch {
    throw new CliUsageError("a postgres:// store needs @rein/store-postgres: install it beside @rein/cli (npm i @rein/store-postgres)");
  }
  return new module.PostgresSessionStore({ connectionString: url, shutdownFlush: options.shutdownFlush ?? false, asyncWrites: options.asyncWrites ?? false });
}

/**
 * @internal A `PostgresApiKeyStore` on `url` (`rein keys --store
 * postgres://…`, `rein serve --auth --store postgres://…`): the keys, their
 * spend caps and spend in the database's `rein_api_keys` table, shared by
 * every server on it. A missing `@rein/store-postgres` is a usage error.
 */
export function openPostgresKeys(url: string): ApiKeyStore {
  let module: { PostgresApiKeyStore: new (options: { connectionString: string }) => ApiKeyStore };
  try {
    module = require("@rein/store-postgres") as typeof module;
  } catch {
    throw new CliUsageError("a postgres:// store needs @rein/store-postgres: install it beside @rein/cli (npm i @rein/store-postgres)");
  }
  return new module.PostgresApiKeyStore({ connectionString: url });
}
