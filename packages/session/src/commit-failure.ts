import { channel } from "node:diagnostics_channel";

/**
 * The diagnostics channel a {@link SessionNodeWriter} publishes a
 * {@link SessionCommitFailure} on, once per failure (from the first failed
 * commit until everything the writer kept has been committed). Subscribe
 * to log storage faults of writers you did not create yourself (those of
 * `Context.forSession`); nothing is printed otherwise.
 * @example
 * ```ts
 * import { subscribe } from "node:diagnostics_channel";
 * subscribe(SESSION_COMMIT_FAILED_CHANNEL, (message) => {
 *   const failure = message as SessionCommitFailure;
 *   logger.error({ err: failure.error, sessionId: failure.sessionId }, "session commit failed");
 * });
 * ```
 */
export const SESSION_COMMIT_FAILED_CHANNEL = "rein:session:commit-failed";

/**
 * A commit of a {@link SessionNodeWriter} failed. The writer keeps the
 * operations and retries them (with the next commit, and from a timer for
 * `batching: "tick"`), so nothing is dropped; the call whose nodes they are
 * fails with {@link error} if they are still uncommitted when it returns.
 * Reported once per failure: from the first failed commit until everything
 * kept has been committed.
 * @example
 * ```ts
 * new SessionNodeWriter(store, "s1", {
 *   onCommitError: (failure) => logger.error({ err: failure.error, pending: failure.pending }, "session commit failed"),
 * });
 * ```
 */
export interface SessionCommitFailure {
  readonly type: "commit-failed";
  readonly sessionId: string;
  /** The store's location (file, `":memory:"`, `"in-memory store"`). */
  readonly location: string;
  /** What the store threw. */
  readonly error: unknown;
  /** How many operations the writer keeps for the retry. */
  readonly pending: number;
}

const commitFailed = channel(SESSION_COMMIT_FAILED_CHANNEL);

/**
 * Hands `failure` to `handler` (when given) and to the subscribers of
 * {@link SESSION_COMMIT_FAILED_CHANNEL}; a handler or subscriber that
 * throws is ignored, so reporting never turns into another failure.
 * @internal
 */
export function reportCommitFailure(
  failure: SessionCommitFailure,
  handler: ((failure: SessionCommitFailure) => void) | undefined,
): void {
  if (handler !== undefined) {
    try {
      handler(failure);
    } catch {
      /* a reporting hook must not fail the writer */
    }
  }
  if (commitFailed.hasSubscribers) {
    try {
      commitFailed.publish(failure);
    } catch {
      /* as above */
    }
  }
}
