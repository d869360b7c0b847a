import { DEFAULT_CAP_PERIOD_MS, microUsd, type KeySpend, type SpendCaps } from "@rein/core";

/** A key row as pg returns it (bigint columns arrive as strings). @internal */
export interface PostgresKeyRow {
  id: string;
  name: string;
  scopes: string;
  key_sha256: string;
  created_at: string;
  period_ms: string;
  cap_tokens: string | null;
  cap_cost_micro: string | null;
  cap_runs: string | null;
  cap_rpm: string | null;
  window_start: string;
  tokens_spent: string;
  tokens_reserved: string;
  cost_spent_micro: string;
  cost_reserved_micro: string;
  active_runs: string;
  minute_start: string;
  minute_count: string;
}

// $2 is always now (epoch ms). The period and minute that hold it, and the row's figures as of
// then (those of an ended period read 0; what requests in flight hold stays held).
const NOW = "$2::bigint";
const WINDOW = `((${NOW} / period_ms) * period_ms)`;
const MINUTE = `((${NOW} / 60000) * 60000)`;
const TOKENS_SPENT = `(CASE WHEN window_start = ${WINDOW} THEN tokens_spent ELSE 0 END)`;
const COST_SPENT = `(CASE WHEN window_start = ${WINDOW} THEN cost_spent_micro ELSE 0 END)`;
const MINUTE_COUNT = `(CASE WHEN minute_start = ${MINUTE} THEN minute_count ELSE 0 END)`;
const ROLL = `tokens_spent = ${TOKENS_SPENT}, cost_spent_micro = ${COST_SPENT}, window_start = ${WINDOW}`;

/**
 * The statements of `PostgresApiKeyStore`, `{t}` standing for the
 * schema-qualified table. Each spend statement is one UPDATE whose WHERE
 * holds the caps' check (the rule of `@rein/core`'s `spendRefusal`): two
 * connections updating one key's row at once are serialised by its row
 * lock, and the second re-checks the WHERE on the row the first committed,
 * so no two reservations can both take the last room.
 * @internal
 */
export const KEY_SQL = {
  create: `CREATE TABLE IF NOT EXISTS {t} (
    id text PRIMARY KEY,
    name text NOT NULL UNIQUE,
    scopes text NOT NULL,
    key_sha256 text NOT NULL,
    created_at bigint NOT NULL,
    period_ms bigint NOT NULL DEFAULT ${DEFAULT_CAP_PERIOD_MS} CHECK (period_ms > 0),
    cap_tokens bigint,
    cap_cost_micro bigint,
    cap_runs bigint,
    cap_rpm bigint,
    window_start bigint NOT NULL DEFAULT 0,
    tokens_spent bigint NOT NULL DEFAULT 0,
    tokens_reserved bigint NOT NULL DEFAULT 0,
    cost_spent_micro bigint NOT NULL DEFAULT 0,
    cost_reserved_micro bigint NOT NULL DEFAULT 0,
    active_runs bigint NOT NULL DEFAULT 0,
    minute_start bigint NOT NULL DEFAULT 0,
    minute_count bigint NOT NULL DEFAULT 0
  )`,
  insert:
    "INSERT INTO {t} (id, name, scopes, key_sha256, created_at, period_ms, cap_tokens, cap_cost_micro, cap_runs, cap_rpm) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
  list: "SELECT * FROM {t} ORDER BY created_at, name",
  find: "SELECT * FROM {t} WHERE id = $1",
  revoke: "DELETE FROM {t} WHERE name = $1",
  startRun:
    `UPDATE {t} SET ${ROLL}, minute_count = ${MINUTE_COUNT} + 1, minute_start = ${MINUTE}, active_runs = active_runs + 1 ` +
    `WHERE id = $1 AND (cap_runs IS NULL OR active_runs < cap_runs) AND (cap_rpm IS NULL OR ${MINUTE_COUNT} < cap_rpm) ` +
    `AND (cap_tokens IS NULL OR ${TOKENS_SPENT} + tokens_reserved < cap_tokens) AND (cap_cost_micro IS NULL OR ${COST_SPENT} + cost_reserved_micro < cap_cost_micro)`,
  endRun: "UPDATE {t} SET active_runs = GREATEST(active_runs - 1, 0) WHERE id = $1",
  reserve:
    `UPDATE {t} SET ${ROLL}, tokens_reserved = tokens_reserved + $3, cost_reserved_micro = cost_reserved_micro + $4 ` +
    `WHERE id = $1 AND (cap_tokens IS NULL OR ${TOKENS_SPENT} + tokens_reserved + $3 <= cap_tokens) ` +
    `AND (cap_cost_micro IS NULL OR ${COST_SPENT} + cost_reserved_micro + $4 <= cap_cost_micro)`,
  settle:
    `UPDATE {t} SET tokens_spent = ${TOKENS_SPENT} + $5, cost_spent_micro = ${COST_SPENT} + $6, window_start = ${WINDOW}, ` +
    "tokens_reserved = GREATEST(tokens_reserved - $3, 0), cost_reserved_micro = GREATEST(cost_reserved_micro - $4, 0) WHERE id = $1",
};

/** The cap columns of `caps` for {@link KEY_SQL.insert} ($6-$10; null: no cap). @internal */
export function capColumns(caps: SpendCaps | undefined): (number | null)[] {
  return [caps?.periodMs ?? DEFAULT_CAP_PERIOD_MS, caps?.tokens ?? null, caps?.costUsd === undefined ? null : microUsd(caps.costUsd), caps?.concurrentRuns ?? null, caps?.requestsPerMinute ?? null];
}

/** The caps of a key row, undefined when it has none. @internal */
export function capsOfRow(row: PostgresKeyRow): SpendCaps | undefined {
  const caps: { -readonly [K in keyof SpendCaps]: SpendCaps[K] } = { periodMs: Number(row.period_ms) };
  if (row.cap_tokens !== null) caps.tokens = Number(row.cap_tokens);
  if (row.cap_cost_micro !== null) caps.costUsd = Number(row.cap_cost_micro) / 1e6;
  if (row.cap_runs !== null) caps.concurrentRuns = Number(row.cap_runs);
  if (row.cap_rpm !== null) caps.requestsPerMinute = Number(row.cap_rpm);
  return Object.keys(caps).length > 1 ? caps : undefined;
}

/** The spend figures of a key row, as stored. @internal */
export function spendOfRow(row: PostgresKeyRow): KeySpend {
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
