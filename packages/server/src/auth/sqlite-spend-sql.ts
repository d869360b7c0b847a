import { DEFAULT_CAP_PERIOD_MS, type KeySpend, type SpendCaps } from "rein";

/** @internal The spend columns of a key row as SQLite returns them. */
export interface SpendRow {
  period_ms: number;
  cap_tokens: number | null;
  cap_cost_micro: number | null;
  cap_runs: number | null;
  cap_rpm: number | null;
  window_start: number;
  tokens_spent: number;
  tokens_reserved: number;
  cost_spent_micro: number;
  cost_reserved_micro: number;
  active_runs: number;
  minute_start: number;
  minute_count: number;
}

/** @internal The spend columns, for a SELECT. */
export const SPEND_COLUMNS =
  "period_ms, cap_tokens, cap_cost_micro, cap_runs, cap_rpm, window_start, tokens_spent, tokens_reserved, cost_spent_micro, cost_reserved_micro, active_runs, minute_start, minute_count";

// The period and the minute that hold @now, and the figures of the row as of @now (an ended period's read 0).
const NOW = "CAST(@now AS INTEGER)";
const WINDOW = `((${NOW} / period_ms) * period_ms)`;
const MINUTE = `((${NOW} / 60000) * 60000)`;
const TOKENS_SPENT = `(CASE WHEN window_start = ${WINDOW} THEN tokens_spent ELSE 0 END)`;
const COST_SPENT = `(CASE WHEN window_start = ${WINDOW} THEN cost_spent_micro ELSE 0 END)`;
const MINUTE_COUNT = `(CASE WHEN minute_start = ${MINUTE} THEN minute_count ELSE 0 END)`;
const ROLL = `tokens_spent = ${TOKENS_SPENT}, cost_spent_micro = ${COST_SPENT}, window_start = ${WINDOW}`;

/**
 * @internal The statements of {@link SqliteApiKeyStore}'s spend caps: each
 * one UPDATE whose WHERE holds the caps' check (the same rule as `rein`'s
 * `spendRefusal`), so the check and the change are one atomic step however
 * many connections share the file.
 */
export const SQLITE_SPEND = {
  columns: [
    ["period_ms", `INTEGER NOT NULL DEFAULT ${DEFAULT_CAP_PERIOD_MS}`],
    ["cap_tokens", "INTEGER"],
    ["cap_cost_micro", "INTEGER"],
    ["cap_runs", "INTEGER"],
    ["cap_rpm", "INTEGER"],
    ["window_start", "INTEGER NOT NULL DEFAULT 0"],
    ["tokens_spent", "INTEGER NOT NULL DEFAULT 0"],
    ["tokens_reserved", "INTEGER NOT NULL DEFAULT 0"],
    ["cost_spent_micro", "INTEGER NOT NULL DEFAULT 0"],
    ["cost_reserved_micro", "INTEGER NOT NULL DEFAULT 0"],
    ["active_runs", "INTEGER NOT NULL DEFAULT 0"],
    ["minute_start", "INTEGER NOT NULL DEFAULT 0"],
    ["minute_count", "INTEGER NOT NULL DEFAULT 0"],
  ] as const,
  startRun:
    `UPDATE rein_api_keys SET ${ROLL}, minute_count = ${MINUTE_COUNT} + 1, minute_start = ${MINUTE}, active_runs = active_runs + 1 ` +
    `WHERE id = @id AND (cap_runs IS NULL OR active_runs < cap_runs) AND (cap_rpm IS NULL OR ${MINUTE_COUNT} < cap_rpm) ` +
    `AND (cap_tokens IS NULL OR ${TOKENS_SPENT} + tokens_reserved < cap_tokens) AND (cap_cost_micro IS NULL OR ${COST_SPENT} + cost_reserved_micro < cap_cost_micro)`,
  endRun: "UPDATE rein_api_keys SET active_runs = MAX(active_runs - 1, 0) WHERE id = @id",
  reserve:
    `UPDATE rein_api_keys SET ${ROLL}, tokens_reserved = tokens_reserved + @tokens, cost_reserved_micro = cost_reserved_micro + @cost ` +
    `WHERE id = @id AND (cap_tokens IS NULL OR ${TOKENS_SPENT} + tokens_reserved + @tokens <= cap_tokens) ` +
    `AND (cap_cost_micro IS NULL OR ${COST_SPENT} + cost_reserved_micro + @cost <= cap_cost_micro)`,
  settle:
    `UPDATE rein_api_keys SET tokens_spent = ${TOKENS_SPENT} + @usedTokens, cost_spent_micro = ${COST_SPENT} + @usedCost, window_start = ${WINDOW}, ` +
    "tokens_reserved = MAX(tokens_reserved - @tokens, 0), cost_reserved_micro = MAX(cost_reserved_micro - @cost, 0) WHERE id = @id",
};

/** @internal The caps of a key row, undefined when it has none. */
export function capsOfRow(row: SpendRow): SpendCaps | undefined {
  const caps: { -readonly [K in keyof SpendCaps]: SpendCaps[K] } = { periodMs: Number(row.period_ms) };
  if (row.cap_tokens !== null) caps.tokens = Number(row.cap_tokens);
  if (row.cap_cost_micro !== null) caps.costUsd = Number(row.cap_cost_micro) / 1e6;
  if (row.cap_runs !== null) caps.concurrentRuns = Number(row.cap_runs);
  if (row.cap_rpm !== null) caps.requestsPerMinute = Number(row.cap_rpm);
  return Object.keys(caps).length > 1 ? caps : undefined;
}

/** @internal The spend figures of a key row. */
export function spendOfRow(row: SpendRow): KeySpend {
  return {
    windowStart: Number(row.window_start),
    tokensSpent: Number(row.tokens_spent),
    tokensReserved: Number(row.tokens_reserved),
    costSpentMicroUsd: Number(row.cost_spent_micro),
    costReservedMicroUsd: Number(row.cost_reserved_micro),
    activeRuns: Number(row.active_runs),
    minuteStart: Number(row.minute_start),
    minuteCount: Number(row.minute_count),
  };
}
