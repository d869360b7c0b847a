import { DEFAULT_CAP_PERIOD_MS, type KeySpend, type SpendCaps, type SpendHold } from "rein";

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

/**
 * @internal The statements of {@link SqliteApiKeyStore}'s spend caps. Each
 * step runs in one `BEGIN IMMEDIATE` transaction (the file's write lock, so
 * steps of every connection are serialised): the key's expired holds
 * dropped, its spend read, the step applied (`rein`'s `startRunStep`,
 * `reserveStep`, …) and written back with the hold it adds or gives back.
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
  holdsTable:
    "CREATE TABLE IF NOT EXISTS rein_api_key_holds (key_id TEXT NOT NULL, hold_id TEXT NOT NULL, kind TEXT NOT NULL, tokens INTEGER NOT NULL, cost_micro INTEGER NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (key_id, hold_id))",
  expired: "SELECT hold_id, kind, tokens, cost_micro, expires_at FROM rein_api_key_holds WHERE key_id = @id AND expires_at <= @now",
  deleteExpired: "DELETE FROM rein_api_key_holds WHERE key_id = @id AND expires_at <= @now",
  findHold: "SELECT hold_id, kind, tokens, cost_micro, expires_at FROM rein_api_key_holds WHERE key_id = @id AND hold_id = @holdId",
  deleteHold: "DELETE FROM rein_api_key_holds WHERE key_id = @id AND hold_id = @holdId",
  insertHold: "INSERT INTO rein_api_key_holds (key_id, hold_id, kind, tokens, cost_micro, expires_at) VALUES (@id, @holdId, @kind, @tokens, @cost, @expiresAt)",
  deleteHolds: "DELETE FROM rein_api_key_holds WHERE key_id = @id",
  writeSpend:
    "UPDATE rein_api_keys SET window_start = @windowStart, tokens_spent = @tokensSpent, tokens_reserved = @tokensReserved, cost_spent_micro = @costSpentMicroUsd, " +
    "cost_reserved_micro = @costReservedMicroUsd, active_runs = @activeRuns, minute_start = @minuteStart, minute_count = @minuteCount WHERE id = @id",
};

/** @internal A hold row. */
export interface HoldRow {
  hold_id: string;
  kind: string;
  tokens: number;
  cost_micro: number;
  expires_at: number;
}

/** @internal The hold of a row. */
export function holdOfRow(row: HoldRow): SpendHold {
  return { holdId: row.hold_id, kind: row.kind === "run" ? "run" : "request", tokens: Number(row.tokens), costMicroUsd: Number(row.cost_micro), expiresAt: Number(row.expires_at) };
}

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
