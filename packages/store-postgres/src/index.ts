/**
 * @rein/store-postgres — {@link PostgresSessionStore}: Rein's session store
 * on PostgreSQL (`pg`), for many processes and machines on one database.
 * @packageDocumentation
 */
export { PostgresSessionStore } from "./postgres-session-store";
export type { PostgresSessionStoreOptions, PostgresConnectionConfig } from "./postgres-store-options";
export {
  PostgresStoreError,
  PostgresConnectionError,
  PostgresAuthenticationError,
  PostgresSchemaVersionError,
  PostgresForeignSchemaError,
} from "./postgres-errors";
export { PostgresApiKeyStore } from "./postgres-api-key-store";
export type { PostgresApiKeyStoreOptions } from "./postgres-api-key-store";
