import { SessionSchemaVersionError, SessionStoreError } from "@rein/session";

/**
 * A fault of the PostgreSQL server or of the connection to it that no more
 * specific session-store error describes. `code` is the server's SQLSTATE
 * (`"42501"`) or the socket's error code (`"ECONNREFUSED"`). Any transaction
 * in progress was rolled back; the store keeps working.
 *
 * @example
 * ```ts
 * try { store.listSessions(); } catch (error) {
 *   if (PostgresStoreError.isInstance(error)) console.error(error.code);
 * }
 * ```
 */
export class PostgresStoreError extends SessionStoreError {
  static {
    this.defineErrorName("PostgresStoreError");
  }

  /** SQLSTATE of the server's error, or the socket's error code; undefined when neither was given. */
  readonly code: string | undefined;

  constructor(message: string, location: string, code: string | undefined, options?: { cause?: unknown }) {
    super(message, location, options);
    this.code = code;
  }
}

/**
 * The server cannot be reached, or the connection to it was lost (refused,
 * unknown host, timed out, terminated by the server, server shutting down).
 * Nothing of the call that failed was committed, unless the connection was
 * lost while the commit itself was on its way (then a retry is harmless:
 * appends are idempotent). The store connects again on the next call.
 *
 * @example
 * ```ts
 * err.message; // "Cannot reach PostgreSQL for session store 'postgres://127.0.0.1:5432/app (schema rein)': connect ECONNREFUSED 127.0.0.1:5432 (ECONNREFUSED). Nothing was written: check that the server is running and that host and port in the connection string are right; the store connects again on the next call."
 * ```
 */
export class PostgresConnectionError extends PostgresStoreError {
  static {
    this.defineErrorName("PostgresConnectionError");
  }
}

/**
 * The server refused the credentials (wrong password, unknown role, or no
 * `pg_hba.conf` entry for this client). Retrying does not help until the
 * configuration changes.
 *
 * @example
 * ```ts
 * err.code; // "28P01"
 * ```
 */
export class PostgresAuthenticationError extends PostgresStoreError {
  static {
    this.defineErrorName("PostgresAuthenticationError");
  }
}

/**
 * The store's schema was written by a newer `@rein/store-postgres` whose
 * schema version this build does not know. Nothing was changed. A
 * {@link SessionSchemaVersionError}, so code that handles the SQLite
 * store's refusal handles this one too.
 *
 * @example
 * ```ts
 * err.message; // "Session store 'postgres://db:5432/app (schema rein)' has schema version 2, newer than version 1 supported by this @rein/store-postgres. Nothing was changed: upgrade @rein/store-postgres on this machine, or pass another { schema }."
 * ```
 */
export class PostgresSchemaVersionError extends SessionSchemaVersionError {
  static {
    this.defineErrorName("PostgresSchemaVersionError");
  }

  constructor(location: string, foundVersion: number, supportedVersion: number) {
    super(location, foundVersion, supportedVersion);
    this.message =
      `Session store '${location}' has schema version ${foundVersion}, newer than version ${supportedVersion} supported by this @rein/store-postgres. ` +
      `Nothing was changed: upgrade @rein/store-postgres on this machine, or pass another { schema }.`;
  }
}

/**
 * The schema holds tables named `sessions` or `nodes` that Rein did not
 * create (it has no `rein_schema` table). Rein never writes into it.
 *
 * @example
 * ```ts
 * err.tables; // ["sessions"]
 * ```
 */
export class PostgresForeignSchemaError extends SessionStoreError {
  static {
    this.defineErrorName("PostgresForeignSchemaError");
  }

  /** The tables found that Rein would have created. */
  readonly tables: readonly string[];

  constructor(location: string, schema: string, tables: readonly string[]) {
    super(
      `Schema '${schema}' of '${location}' has tables Rein did not create (${tables.join(", ")}). ` +
        `Nothing was changed: pass another { schema } to PostgresSessionStore, e.g. "rein".`,
      location,
    );
    this.tables = tables;
  }
}
