import type { Usage } from "../model/model-provider";

/**
 * Prices per million tokens, by model id, for `RunResult.usage.costUsd`.
 * @example
 * ```ts
 * const pricing: Pricing = { "claude-sonnet-4-5": { inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3 } };
 * new Runtime({ pricing });
 * ```
 */
export type Pricing = Readonly<Record<string, ModelPrice>>;

/** What one model costs, in US dollars per million tokens. */
export interface ModelPrice {
  readonly inputPerMTok: number;
  readonly outputPerMTok: number;
  /** Cached input tokens (a cache read). @default inputPerMTok */
  readonly cachedInputPerMTok?: number;
  /** Input tokens written to the cache. @default inputPerMTok */
  readonly cacheCreationPerMTok?: number;
}

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

/**
 * What one request cost at `price`, in US dollars: fresh input (input minus
 * cached minus cache creation), cached input, cache creation and output.
 * @internal
 */
export function costOf(price: ModelPrice, usage: Usage): number {
  const input = finite(usage.inputTokens);
  const cached = finite(usage.cachedInputTokens);
  const created = finite(usage.cacheCreationInputTokens);
  const fresh = Math.max(0, input - cached - created);
  return (
    (fresh * price.inputPerMTok +
      cached * (price.cachedInputPerMTok ?? price.inputPerMTok) +
      created * (price.cacheCreationPerMTok ?? price.inputPerMTok) +
      finite(usage.outputTokens) * price.outputPerMTok) /
    1e6
  );
}

/** The price of `model` in `pricing`, if listed. @internal */
export function priceOf(pricing: Pricing | undefined, model: string): ModelPrice | undefined {
  return pricing !== undefined && Object.prototype.hasOwnProperty.call(pricing, model) ? pricing[model] : undefined;
}

/** A token count a provider reported, or 0 for anything that is not a finite non-negative number. @internal */
export function finite(value: number | undefined): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}
