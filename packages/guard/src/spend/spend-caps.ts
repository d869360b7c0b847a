// The arithmetic of per-key spend caps: policy, like reach, so it lives in guard, where every key
// store can reach it: @rein/server's in-memory and SQLite stores and @rein/store-postgres's (which
// imports neither the server nor core). A store applies it atomically; this file only says what
// is allowed. Core's SpendReserver seam is how a run asks a store for it.

/**
 * What an API key may spend: tokens and cost per period (a fixed window of
 * `periodMs`, aligned to the Unix epoch: with the default, each UTC day),
 * runs at once, and runs started per minute (a fixed window of each UTC
 * minute). A cap left out is no limit.
 * @example
 * ```ts
 * await keys.create({ name: "ci", scopes: ["run"], caps: { tokens: 2_000_000, costUsd: 5, concurrentRuns: 4, requestsPerMinute: 60 } });
 * ```
 */
export interface SpendCaps {
  /** The length of the window `tokens` and `costUsd` count in, in ms. @default 86_400_000 (a UTC day) */
  readonly periodMs?: number;
  /** Input and output tokens of the key's model requests per period. */
  readonly tokens?: number;
  /** US dollars of the key's model requests per period (priced with the runtime's `pricing`; a request of a model without a price is refused). */
  readonly costUsd?: number;
  /** Runs of the key in flight at once. */
  readonly concurrentRuns?: number;
  /** Runs the key may start per UTC minute (`POST /v1/agent/run`, `POST /v1/runs/:id/resume`). */
  readonly requestsPerMinute?: number;
}

/** The default {@link SpendCaps.periodMs}: a day (86,400,000 ms). */
export const DEFAULT_CAP_PERIOD_MS = 86_400_000;

/**
 * A key's spend as its store keeps it: the current period's figures and
 * what requests in flight hold. Cost is in micro-dollars (integers, so
 * many processes adding to it never drift).
 * @example
 * ```ts
 * const spend = await keys.spendOf(record.id);
 * console.log(spend?.tokensSpent, spend?.tokensReserved);
 * ```
 */
export interface KeySpend {
  /** Start of the period `tokensSpent` and `costSpentMicroUsd` count in (epoch ms). */
  readonly windowStart: number;
  readonly tokensSpent: number;
  readonly tokensReserved: number;
  readonly costSpentMicroUsd: number;
  readonly costReservedMicroUsd: number;
  readonly activeRuns: number;
  /** Start of the minute `minuteCount` counts in (epoch ms). */
  readonly minuteStart: number;
  readonly minuteCount: number;
}

/** One request's spend as a store counts it: tokens, and cost in micro-dollars. */
export interface StoredSpend {
  readonly tokens: number;
  readonly costMicroUsd: number;
}

/** Which cap refused: the two spend dimensions, the two run limits, or a key revoked meanwhile. */
export type SpendCapDimension = "tokens" | "cost" | "concurrentRuns" | "requestsPerMinute" | "revoked";

/**
 * Why a store refused a run or a reservation, and when to try again:
 * `retryAfterSeconds` is how long until the period (or minute) that holds
 * the refused figure ends — 1 for `concurrentRuns`, which frees when one
 * of the key's runs ends.
 */
export interface SpendRefusal {
  readonly dimension: SpendCapDimension;
  /** What the key has spent and holds (or runs, or runs this minute), and what was asked on top. */
  readonly used: number;
  readonly asked: number;
  readonly limit: number;
  readonly retryAfterSeconds: number;
}

/** A fresh key's spend. */
export const NO_SPEND: KeySpend = { windowStart: 0, tokensSpent: 0, tokensReserved: 0, costSpentMicroUsd: 0, costReservedMicroUsd: 0, activeRuns: 0, minuteStart: 0, minuteCount: 0 };

/** The largest cost cap, in US dollars: stores count cost in integer micro-dollars, which must stay exact. */
const MAX_COST_USD = Math.floor(Number.MAX_SAFE_INTEGER / 1e6);

/** What each cap may be at most, as its message says it. */
function upperBound(field: string): { readonly most: number; readonly unit: string } {
  if (field === "costUsd") return { most: MAX_COST_USD, unit: " (US dollars; the store counts integer micro-dollars)" };
  return { most: Number.MAX_SAFE_INTEGER, unit: field === "periodMs" ? " (ms, about 285,000 years)" : "" };
}

/**
 * `caps` checked (a `TypeError` naming the field, and the bound it
 * crossed) and made canonical: only the caps given, periodMs always. Each
 * cap has its own upper bound: `costUsd` 9,007,199,254 (micro-dollars are
 * integers), the others `Number.MAX_SAFE_INTEGER`.
 * @example
 * ```ts
 * checkSpendCaps("MyKeyStore.create", { tokens: 1_000 }); // { periodMs: 86_400_000, tokens: 1_000 }
 * ```
 */
export function checkSpendCaps(owner: string, caps: SpendCaps | undefined): Required<Pick<SpendCaps, "periodMs">> & SpendCaps {
  if (caps === undefined) return { periodMs: DEFAULT_CAP_PERIOD_MS };
  if (typeof caps !== "object" || caps === null) throw new TypeError(`${owner}: caps must be { periodMs?, tokens?, costUsd?, concurrentRuns?, requestsPerMinute? }`);
  const out: { -readonly [K in keyof SpendCaps]: SpendCaps[K] } = { periodMs: DEFAULT_CAP_PERIOD_MS };
  for (const [field, value] of Object.entries(caps)) {
    if (value === undefined) continue;
    const integer = field !== "costUsd";
    if (!["periodMs", "tokens", "costUsd", "concurrentRuns", "requestsPerMinute"].includes(field)) throw new TypeError(`${owner}: caps.${field.slice(0, 40)} is not a cap (periodMs, tokens, costUsd, concurrentRuns, requestsPerMinute)`);
    const least = field === "periodMs" ? 1_000 : field === "costUsd" || field === "tokens" ? 0 : 1;
    if (typeof value !== "number" || !Number.isFinite(value) || value < least || (integer && !Number.isInteger(value))) {
      throw new TypeError(`${owner}: caps.${field} must be a finite ${integer ? "integer" : "number"} >= ${least}, not ${String(value).slice(0, 40)}`);
    }
    const { most, unit } = upperBound(field);
    if (value > most) throw new TypeError(`${owner}: caps.${field} must be at most ${most}${unit}, not ${String(value).slice(0, 40)}`);
    out[field as keyof SpendCaps] = value;
  }
  return out as Required<Pick<SpendCaps, "periodMs">> & SpendCaps;
}

/**
 * Whether `caps` limits anything (a period alone does not).
 * @example
 * ```ts
 * capsAnything({ periodMs: 60_000 }); // false
 * ```
 */
export function capsAnything(caps: SpendCaps | undefined): boolean {
  return caps !== undefined && (caps.tokens !== undefined || caps.costUsd !== undefined || caps.concurrentRuns !== undefined || caps.requestsPerMinute !== undefined);
}

/**
 * US dollars as the micro-dollars a store counts, rounded up (a charge never rounds down to free).
 * @example
 * ```ts
 * microUsd(0.0000012); // 2
 * ```
 */
export function microUsd(usd: number): number {
  return Math.ceil(usd * 1e6 - 1e-6);
}

/**
 * `spend` as of `now`: figures of a period or minute that has ended are
 * zero (what is reserved stays held). A window never moves backwards: when
 * the stored period (or minute) is later than `now`'s — a server whose
 * clock is behind the one that wrote it — its figures stay and count.
 * @example
 * ```ts
 * const spend = currentSpend(caps, stored, Date.now());
 * ```
 */
export function currentSpend(caps: SpendCaps, spend: KeySpend, now: number): KeySpend {
  const windowStart = Math.max(spend.windowStart, windowOf(now, caps.periodMs ?? DEFAULT_CAP_PERIOD_MS));
  const minuteStart = Math.max(spend.minuteStart, windowOf(now, 60_000));
  const sameWindow = spend.windowStart === windowStart;
  const sameMinute = spend.minuteStart === minuteStart;
  return {
    ...spend,
    windowStart,
    tokensSpent: sameWindow ? spend.tokensSpent : 0,
    costSpentMicroUsd: sameWindow ? spend.costSpentMicroUsd : 0,
    minuteStart,
    minuteCount: sameMinute ? spend.minuteCount : 0,
  };
}

/**
 * The start of the fixed window of `periodMs` that holds `now` (windows are aligned to the Unix epoch).
 * @example
 * ```ts
 * windowOf(90_000, 60_000); // 60_000
 * ```
 */
export function windowOf(now: number, periodMs: number): number {
  return Math.floor(now / periodMs) * periodMs;
}

/**
 * Why `caps` refuse `asked` on top of `spend` (already
 * {@link currentSpend}) at `now` — a run start (`asked` undefined: a run
 * slot, one run of the minute, and tokens and cost not yet all spent) or a
 * reservation — or undefined when they allow it. The stores decide with
 * this, or with SQL that says the same.
 * @example
 * ```ts
 * const refusal = spendRefusal(caps, currentSpend(caps, stored, now), { tokens: 4_200, costMicroUsd: 0 }, now);
 * if (refusal === undefined) hold();
 * ```
 */
export function spendRefusal(caps: SpendCaps, spend: KeySpend, asked: StoredSpend | undefined, now: number): SpendRefusal | undefined {
  const periodEnd = seconds(spend.windowStart + (caps.periodMs ?? DEFAULT_CAP_PERIOD_MS) - now);
  if (asked === undefined) {
    if (caps.concurrentRuns !== undefined && spend.activeRuns >= caps.concurrentRuns) return { dimension: "concurrentRuns", used: spend.activeRuns, asked: 1, limit: caps.concurrentRuns, retryAfterSeconds: 1 };
    if (caps.requestsPerMinute !== undefined && spend.minuteCount >= caps.requestsPerMinute) {
      return { dimension: "requestsPerMinute", used: spend.minuteCount, asked: 1, limit: caps.requestsPerMinute, retryAfterSeconds: seconds(spend.minuteStart + 60_000 - now) };
    }
  }
  const tokens = spend.tokensSpent + spend.tokensReserved;
  // A run may start while anything is left; a reservation needs room for all it asks.
  if (caps.tokens !== undefined && (asked === undefined ? tokens >= caps.tokens : tokens + asked.tokens > caps.tokens)) {
    return { dimension: "tokens", used: tokens, asked: asked?.tokens ?? 0, limit: caps.tokens, retryAfterSeconds: periodEnd };
  }
  const cost = spend.costSpentMicroUsd + spend.costReservedMicroUsd;
  const costCap = caps.costUsd === undefined ? undefined : microUsd(caps.costUsd);
  if (costCap !== undefined && (asked === undefined ? cost >= costCap : cost + asked.costMicroUsd > costCap)) {
    return { dimension: "cost", used: cost, asked: asked?.costMicroUsd ?? 0, limit: costCap, retryAfterSeconds: periodEnd };
  }
  return undefined;
}

/** Whole seconds until `ms` from now, at least 1. */
function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
