/**
 * Prices per million tokens, by model id: for a run's `usage.costUsd`, a
 * reach budget's `maxCostUsd` and a key's spend caps.
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

/** The token counts of one model response that a price applies to. */
export interface PricedUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cachedInputTokens?: number;
  readonly cacheCreationInputTokens?: number;
}

/**
 * What one request cost at `price`, in US dollars: fresh input (input minus
 * cached minus cache creation), cached input, cache creation and output.
 */
export function costOf(price: ModelPrice, usage: PricedUsage): number {
  const input = tokenCount(usage.inputTokens);
  const cached = tokenCount(usage.cachedInputTokens);
  const created = tokenCount(usage.cacheCreationInputTokens);
  const fresh = Math.max(0, input - cached - created);
  return (
    (fresh * price.inputPerMTok +
      cached * (price.cachedInputPerMTok ?? price.inputPerMTok) +
      created * (price.cacheCreationPerMTok ?? price.inputPerMTok) +
      tokenCount(usage.outputTokens) * price.outputPerMTok) /
    1e6
  );
}

/** The price of `model` in `pricing`, if listed (own entries only). */
export function priceOf(pricing: Pricing | undefined, model: string): ModelPrice | undefined {
  return pricing !== undefined && Object.prototype.hasOwnProperty.call(pricing, model) ? pricing[model] : undefined;
}

/** A token count a provider reported, or 0 for anything that is not a finite non-negative number. */
export function tokenCount(value: number | undefined): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}
