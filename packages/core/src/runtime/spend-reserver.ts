/**
 * What one model request is reserved or charged with: tokens (input and
 * output together) and its cost in US dollars — undefined when the request's
 * model has no price in the run's pricing table (nothing can say what it costs).
 * @example
 * ```ts
 * { tokens: 4_396, costUsd: 0.0132 }
 * ```
 */
export interface SpendAmount {
  readonly tokens: number;
  readonly costUsd: number | undefined;
}

/**
 * What a {@link SpendReserver} holds for one request until it is answered:
 * {@link settle} charges what the request really used and gives back the
 * rest of the reservation (a request sent that got no answer — a cancel, a
 * provider error — is settled with the whole reservation, or with the usage
 * the provider reported before failing if that is more); {@link release}
 * gives all of it back (the request was never sent).
 * @example
 * ```ts
 * const held = await reserver.reserve({ tokens: 4_396, costUsd: 0.0132 });
 * await held.settle({ tokens: 1_020, costUsd: 0.003 });
 * ```
 */
export interface SpendReservation {
  settle(used: SpendAmount): Promise<void>;
  release(): Promise<void>;
}

/**
 * Holds a caller's spend for each model request of a run, before the
 * request is sent: the seam an API key's spend caps use (`@rein/server`
 * keeps the totals in its key store, so a cap holds across processes).
 * `sendModelRequest` — the one gate every model request passes, compaction
 * included — calls {@link reserve} with the request's estimate (its input
 * estimate plus its output limit, priced with the run's table) after the
 * reach check and before the provider, sends the request with
 * `maxOutputTokens` set to the output it reserved (so the model cannot write
 * more than is held), then settles the reservation with the answer's usage
 * — with the reservation itself (or the usage reported, if more) when the
 * request was sent and no answer came — or releases it when it was never sent. A reserver refuses by
 * throwing a `ReachError` (the run stops with it, the request never sent);
 * anything else it throws fails the run too. Given with
 * `withRunListener(listener, fn, { spend })`; every run under it, nested
 * ones included, reserves through it.
 * @example
 * ```ts
 * const spend: SpendReserver = {
 *   async reserve(estimate) {
 *     if (left < estimate.tokens) throw new ReachError("token cap reached");
 *     left -= estimate.tokens;
 *     return { settle: async (used) => { left += estimate.tokens - used.tokens; }, release: async () => { left += estimate.tokens; } };
 *   },
 * };
 * await withRunListener(() => undefined, () => agent.research(task), { spend });
 * ```
 */
export interface SpendReserver {
  reserve(estimate: SpendAmount): Promise<SpendReservation>;
}

/**
 * The output tokens a request is reserved for when it sets no
 * `maxOutputTokens` (the Anthropic adapter's own default `max_tokens`), and
 * the `maxOutputTokens` it is then sent with.
 */
export const DEFAULT_RESERVED_OUTPUT_TOKENS = 4_096;
