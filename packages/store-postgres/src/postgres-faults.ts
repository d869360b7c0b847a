import {
  LeaseLostError,
  SessionExistsError,
  SessionNodeConflictError,
  SessionNodeNotFoundError,
  SessionNotFoundError,
  SessionStoreBusyError,
  SessionStoreClosedError,
  SessionStoreDiskFullError,
} from "@rein/session";
import type { PostgresFailure } from "./postgres-worker";
import {
  PostgresAuthenticationError,
  PostgresConnectionError,
  PostgresForeignSchemaError,
  PostgresSchemaVersionError,
  PostgresStoreError,
} from "./postgres-errors";

/** A request the worker answered with a failure. @internal */
export class PostgresCallFailure extends Error {
  constructor(readonly failure: PostgresFailure) {
    super(failure.message);
  }
}

/** The worker thread ended or could not start. @internal */
export class PostgresWorkerGone extends Error {}

/** Socket-level error codes that mean the server is not reachable or the connection broke. */
const UNREACHABLE = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "ETIMEDOUT", "EPIPE", "ECONNABORTED"]);

/** SQLSTATEs of a lock or resource that another session holds: the same call may simply be retried. */
const BUSY = new Set(["55P03", "40P01", "40001", "53300", "57014"]);

/** Where the session's data came from, for the what-to-do part of a message. */
interface FaultContext {
  readonly location: string;
  readonly schema: string;
  /** How long the call waited, in ms (for a busy error). */
  readonly waitedMs: number;
}

function connectionLost(failure: PostgresFailure): boolean {
  const { code, message } = failure;
  if (code !== undefined && (UNREACHABLE.has(code) || code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03")) return true;
  return code === undefined && /connect|terminat|timeout|closed|ended/i.test(message);
}

/**
 * The typed error for whatever went wrong in a store call: Rein's own
 * faults by kind, the driver's and the server's by code. Never a raw pg
 * error; the message says what to do.
 * @internal
 */
export function postgresFault(error: unknown, context: FaultContext): Error {
  const { location } = context;
  if (error instanceof PostgresWorkerGone) {
    return new PostgresStoreError(
      `The worker thread of session store '${location}' has ended (${error.message}). The store starts a new one on the next call.`,
      location,
      undefined,
      { cause: error },
    );
  }
  if (!(error instanceof PostgresCallFailure)) return error instanceof Error ? error : new Error(String(error));
  const { failure } = error;
  const data = (failure.data ?? {}) as {
    sessionId?: string;
    nodeId?: string;
    foundVersion?: number;
    supportedVersion?: number;
    tables?: string[];
    runId?: string;
    heldEpoch?: number;
    currentEpoch?: number | null;
  };
  switch (failure.kind) {
    case "session-not-found":
      return new SessionNotFoundError(data.sessionId!, location);
    case "session-exists":
      return new SessionExistsError(data.sessionId!, location);
    case "node-not-found":
      return new SessionNodeNotFoundError(data.sessionId!, data.nodeId!, location);
    case "node-conflict":
      return new SessionNodeConflictError(data.sessionId!, data.nodeId!, location);
    case "lease-lost":
      return new LeaseLostError(data.runId!, data.heldEpoch!, data.currentEpoch ?? null, location);
    case "schema-version":
      return new PostgresSchemaVersionError(location, data.foundVersion!, data.supportedVersion!);
    case "foreign-schema":
      return new PostgresForeignSchemaError(location, context.schema, data.tables!);
    case "closed":
      return new SessionStoreClosedError(location);
  }
  const code = failure.code;
  const reason = `${failure.message}${code === undefined ? "" : ` (${code})`}`;
  const cause = { cause: error };
  if (code === "28P01" || code === "28000") {
    return new PostgresAuthenticationError(
      `PostgreSQL refused the credentials of session store '${location}': ${reason}. ` +
        `Nothing was written: check the user and password in the connection string (or PGUSER / PGPASSWORD), and that pg_hba.conf admits this host.`,
      location,
      code,
      cause,
    );
  }
  if (code !== undefined && BUSY.has(code)) return new SessionStoreBusyError(location, context.waitedMs, cause);
  if (code === "53100") return new SessionStoreDiskFullError(location, cause);
  if (connectionLost(failure)) {
    return new PostgresConnectionError(
      `Cannot reach PostgreSQL for session store '${location}': ${reason}. ` +
        `Nothing was written, unless a commit was already on its way (a retry is harmless: appends are idempotent). ` +
        `Check that the server is running and that host and port in the connection string are right; the store connects again on the next call.`,
      location,
      code,
      cause,
    );
  }
  if (code === "3D000") {
    return new PostgresConnectionError(
      `The database of session store '${location}' does not exist: ${reason}. Create it (CREATE DATABASE), or name another one in the connection string.`,
      location,
      code,
      cause,
    );
  }
  if (code === "42501") {
    return new PostgresStoreError(
      `PostgreSQL denied session store '${location}' access: ${reason}. ` +
        `Grant the user CREATE on the database (to create schema '${context.schema}') and use of that schema, or create the schema beforehand for it.`,
      location,
      code,
      cause,
    );
  }
  if (code === "25006") {
    return new PostgresStoreError(
      `Session store '${location}' is connected to a read-only PostgreSQL server (a standby?): ${reason}. Point the connection string at the primary.`,
      location,
      code,
      cause,
    );
  }
  return new PostgresStoreError(
    `PostgreSQL failed a call of session store '${location}': ${reason}. The transaction was rolled back and nothing of it was written; the store keeps working.`,
    location,
    code,
    cause,
  );
}
