export { DEFAULT_CAP_PERIOD_MS, NO_SPEND, checkSpendCaps, capsAnything, currentSpend, microUsd, spendRefusal, windowOf } from "./spend-caps";
export type { SpendCaps, KeySpend, StoredSpend, SpendCapDimension, SpendRefusal } from "./spend-caps";
export { DEFAULT_HOLD_TIMES, liveSpend, startRunStep, reserveStep, settleStep, endRunStep } from "./spend-holds";
export type { SpendHold, HoldTimes, SpendStep } from "./spend-holds";
export { costOf, priceOf, tokenCount } from "./pricing";
export type { Pricing, ModelPrice, PricedUsage } from "./pricing";
