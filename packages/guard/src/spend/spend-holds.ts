import { currentSpend, spendRefusal, type KeySpend, type SpendCaps, type SpendRefusal, type StoredSpend } from "./spend-caps";

// What a key store does to a key's spend, step by step, as pure functions every store applies
// inside its own transaction (with the key's row locked): the stores differ only in how they
// lock, read and write. A hold is what one run slot or one reservation keeps taken, with an
// expiry, so a process that dies holding some cannot keep them taken for ever.

/** What a key store holds for a run (a run slot) or a model request (its reservation) until it is given back or expires. */
export interface SpendHold {
  readonly holdId: string;
  readonly kind: "run" | "request";
  readonly tokens: number;
  readonly costMicroUsd: number;
  /** Epoch ms after which the hold no longer counts (its holder is presumed gone). */
  readonly expiresAt: number;
}

/** How long holds count before they expire, in ms. */
export interface HoldTimes {
  /** A reservation (a model request in flight). @default 600_000 */
  readonly requestMs: number;
  /** A run slot (a run in flight). @default 3_600_000 */
  readonly runMs: number;
}

/** The default {@link HoldTimes}: 10 minutes for a request, an hour for a run. */
export const DEFAULT_HOLD_TIMES: HoldTimes = { requestMs: 600_000, runMs: 3_600_000 };

/** The outcome of one step: the key's new spend and the hold to add (if any), or why the caps refuse. */
export type SpendStep = { readonly spend: KeySpend; readonly hold?: SpendHold } | { readonly refusal: SpendRefusal };

/**
 * `spend` as of `now` with the `expired` holds given back (their reservations and run slots no
 * longer counted) — what every step starts from.
 * @example
 * ```ts
 * const spend = liveSpend(caps, stored, expiredHolds, Date.now());
 * ```
 */
export function liveSpend(caps: SpendCaps, spend: KeySpend, expired: readonly SpendHold[], now: number): KeySpend {
  let tokens = spend.tokensReserved;
  let cost = spend.costReservedMicroUsd;
  let runs = spend.activeRuns;
  for (const hold of expired) {
    if (hold.kind === "run") runs -= 1;
    else {
      tokens -= hold.tokens;
      cost -= hold.costMicroUsd;
    }
  }
  return currentSpend(caps, { ...spend, tokensReserved: Math.max(0, tokens), costReservedMicroUsd: Math.max(0, cost), activeRuns: Math.max(0, runs) }, now);
}

/**
 * Starting a run: a run slot held (`holdId`) and one more run this minute, unless the caps refuse.
 * @example
 * ```ts
 * const step = startRunStep(caps, spend, "run-1", DEFAULT_HOLD_TIMES, now);
 * ```
 */
export function startRunStep(caps: SpendCaps, spend: KeySpend, holdId: string, times: HoldTimes, now: number): SpendStep {
  const refusal = spendRefusal(caps, spend, undefined, now);
  if (refusal !== undefined) return { refusal };
  return {
    spend: { ...spend, activeRuns: spend.activeRuns + 1, minuteCount: spend.minuteCount + 1 },
    hold: { holdId, kind: "run", tokens: 0, costMicroUsd: 0, expiresAt: now + times.runMs },
  };
}

/**
 * Reserving `amount` for one model request (`holdId`), unless the caps refuse.
 * @example
 * ```ts
 * const step = reserveStep(caps, spend, "req-1", { tokens: 4_200, costMicroUsd: 0 }, DEFAULT_HOLD_TIMES, now);
 * ```
 */
export function reserveStep(caps: SpendCaps, spend: KeySpend, holdId: string, amount: StoredSpend, times: HoldTimes, now: number): SpendStep {
  const refusal = spendRefusal(caps, spend, amount, now);
  if (refusal !== undefined) return { refusal };
  return {
    spend: { ...spend, tokensReserved: spend.tokensReserved + amount.tokens, costReservedMicroUsd: spend.costReservedMicroUsd + amount.costMicroUsd },
    hold: { holdId, kind: "request", tokens: amount.tokens, costMicroUsd: amount.costMicroUsd, expiresAt: now + times.requestMs },
  };
}

/**
 * Settling a reservation: `used` charged to the current period, and the hold's amount given back
 * when `hold` is still held (undefined: it expired meanwhile and was given back already).
 * @example
 * ```ts
 * const next = settleStep(spend, hold, { tokens: 1_020, costMicroUsd: 3_000 });
 * ```
 */
export function settleStep(spend: KeySpend, hold: SpendHold | undefined, used: StoredSpend): KeySpend {
  return {
    ...spend,
    tokensSpent: spend.tokensSpent + used.tokens,
    costSpentMicroUsd: spend.costSpentMicroUsd + used.costMicroUsd,
    tokensReserved: Math.max(0, spend.tokensReserved - (hold?.tokens ?? 0)),
    costReservedMicroUsd: Math.max(0, spend.costReservedMicroUsd - (hold?.costMicroUsd ?? 0)),
  };
}

/**
 * Ending a run: its slot given back when `hold` is still held.
 * @example
 * ```ts
 * const next = endRunStep(spend, hold);
 * ```
 */
export function endRunStep(spend: KeySpend, hold: SpendHold | undefined): KeySpend {
  return hold === undefined ? spend : { ...spend, activeRuns: Math.max(0, spend.activeRuns - 1) };
}
