export type { Pricing, ModelPrice } from "@rein/guard";

/**
 * Token usage summed over every model request of a run, nested runs
 * included.
 */
export interface RunUsage {
  /** Input tokens, cached ones included. */
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cachedInputTokens: number;
  readonly cacheCreationInputTokens: number;
  /**
   * US dollars, when the Runtime has a `pricing` table: the priced requests
   * (a model missing from the table adds nothing and is counted in
   * `unpricedRequests`).
   */
  readonly costUsd?: number;
  /** Requests whose model the `pricing` table does not list. */
  readonly unpricedRequests?: number;
}

/** How a run ended. */
export type RunStatus = "completed" | "paused" | "error" | "cancelled";

/**
 * What a run resolves with (`agent.stream(...).result`, the `run-finish`
 * event): the final text, how it ended, and what it used.
 * @example
 * ```ts
 * const { text, usage, requests, toolCalls } = await agent.stream("Summarise the report.").result;
 * ```
 */
export interface RunResult {
  /** The final answer's text (`""` when the run did not complete). */
  readonly text: string;
  readonly status: RunStatus;
  /** Tokens (and cost) of every model request of the run, nested agents' included. */
  readonly usage: RunUsage;
  /** Model requests made by the run, nested agents' included. */
  readonly requests: number;
  /** Tool calls the run made (blocked and refused ones included), nested agents' included. */
  readonly toolCalls: number;
  /** The session the run recorded to, when it recorded. */
  readonly sessionId?: string;
  /** The last node the run recorded (the session's head after a top-level run). */
  readonly headId?: string;
  /** The validated structured answer, when the run had a `responseFormat`. */
  readonly output?: unknown;
  /** Why it did not complete (status `error` or `cancelled`). */
  readonly error?: unknown;
}
