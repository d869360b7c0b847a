import { UsageError } from "./rein-error";

/**
 * A paused turn's continuation was passed to `resumeTurn` after it had
 * already been resumed (one after the other or at once, in this process or
 * another on the same store). A continuation is consumed once: the approved
 * tool call it carries runs once, and every other resume is refused before
 * anything runs. The server answers 409.
 * @example
 * ```ts
 * try { await agent.resumeTurn(continuation, { approve: true, context }); } catch (error) {
 *   if (ContinuationConsumedError.isInstance(error)) console.log(`already resumed: ${error.continuationId}`);
 * }
 * ```
 */
export class ContinuationConsumedError extends UsageError {
  static {
    this.defineErrorName("ContinuationConsumedError");
  }

  /** The continuation's id (`TurnContinuation.id`). */
  readonly continuationId: string;
  /** The session the paused turn recorded to, if any. */
  readonly sessionId: string | undefined;

  constructor(continuationId: string, sessionId: string | undefined) {
    super(
      `the paused turn's continuation ${continuationId}${sessionId === undefined ? "" : ` (session '${sessionId}')`} was already resumed: ` +
        `a continuation is carried on once, so its approved tool call runs once; use the TurnResult of the first resume, ` +
        `or start a new turn`,
    );
    this.continuationId = continuationId;
    this.sessionId = sessionId;
  }
}
