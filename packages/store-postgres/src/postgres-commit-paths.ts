import {
  checkSessionId,
  commitFences,
  SessionStoreBusyError,
  type LeaseFence,
  type SessionCommitOptions,
  type SessionCommitResult,
  type SessionWriteOperation,
} from "@rein/session";
import type { OnPool } from "./postgres-async-calls";
import { PostgresConnectionError } from "./postgres-errors";
import { encodeOperation, type Row } from "./postgres-rows";
import type { PostgresStoreLink } from "./postgres-store-link";

/**
 * The three ways {@link PostgresSessionStore} commits: synchronously
 * through its worker (`commit`), asynchronously through the worker with
 * retries (`commitWithRetry`), and on the asynchronous path's pool
 * (`commitAsync`). All three check and encode their arguments here, and
 * all three run the worker's one commit (`postgres-worker-commit.ts`).
 * @internal
 */

/** Fences as the worker takes them: `[runId, epoch]` pairs, or null for none. */
type EncodedFences = (readonly [string, number])[] | null;

/** A commit's arguments as the worker takes them. @internal */
export interface EncodedCommit {
  readonly operations: Row[];
  readonly fences: EncodedFences;
}

function encodeFences(fences: readonly LeaseFence[]): EncodedFences {
  return fences.length === 0 ? null : fences.map((fence) => [fence.runId, fence.epoch] as const);
}

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/**
 * A commit's arguments checked (a bad one is a `TypeError` naming `method`;
 * a closed store `SessionStoreClosedError`) and encoded; null when there is
 * nothing to commit.
 * @internal
 */
export function encodeCommit(
  method: string,
  link: PostgresStoreLink,
  sessionId: string,
  operations: readonly SessionWriteOperation[],
  options: SessionCommitOptions | undefined,
): EncodedCommit | null {
  checkSessionId(method, sessionId);
  const fences = encodeFences(commitFences(method, options));
  link.assertOpen();
  if (operations.length === 0) return null;
  return { operations: operations.map(encodeOperation), fences };
}

/**
 * `PostgresSessionStore.commitWithRetry`: the commit runs in the worker
 * while this thread goes on; a busy lock or a lost connection is retried
 * with backoff (2, 4, 8 … 50 ms) until `busyTimeoutMs` has passed, a retry
 * reporting the nodes an earlier attempt stored with their stored `seq`.
 * @internal
 */
export async function commitWithRetry(
  link: PostgresStoreLink,
  busyTimeoutMs: number,
  sessionId: string,
  operations: readonly SessionWriteOperation[],
  options: SessionCommitOptions | undefined,
): Promise<SessionCommitResult> {
  const commit = encodeCommit("PostgresSessionStore.commitWithRetry", link, sessionId, operations, options);
  if (commit === null) return { seqs: new Map() };
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    link.assertOpen();
    try {
      const seqs = (await link.callAsync("commit", sessionId, commit.operations, attempt > 0, commit.fences)) as [string, number][];
      return { seqs: new Map(seqs) };
    } catch (error) {
      const waited = Date.now() - started;
      const fault = link.fault(error, waited);
      const transient = SessionStoreBusyError.isInstance(fault) || PostgresConnectionError.isInstance(fault);
      if (!transient || link.closed) throw fault;
      if (waited >= busyTimeoutMs) throw fault;
      const backoff = Math.min(50, 2 ** (attempt + 1)) * (0.5 + Math.random() / 2);
      await sleep(Math.min(backoff, busyTimeoutMs - waited));
    }
  }
}

/**
 * `PostgresSessionStore.commitAsync`: the commit on a pooled connection of
 * the asynchronous path, awaited; a failure is typed as the synchronous
 * path's.
 * @internal
 */
export async function commitOnPool(
  link: PostgresStoreLink,
  onPool: OnPool,
  sessionId: string,
  operations: readonly SessionWriteOperation[],
  options: SessionCommitOptions | undefined,
): Promise<SessionCommitResult> {
  const commit = encodeCommit("PostgresSessionStore.commitAsync", link, sessionId, operations, options);
  if (commit === null) return { seqs: new Map() };
  return { seqs: new Map((await onPool("commit", sessionId, commit.operations, false, commit.fences)) as [string, number][]) };
}
