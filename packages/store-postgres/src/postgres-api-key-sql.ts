import { DEFAULT_CAP_PERIOD_MS, microUsd, type KeySpend, type SpendCaps, type SpendHold } from "@rein/guard";

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

/**
 * The statements of `PostgresApiKeyStore`, `{t}` standing for the
 * schema-qualified key table and `{h}` for its holds. A spend step runs in
 * one transaction that first locks the key's row (`lockKey`, `FOR UPDATE`):
 * steps of every connection on one key are serialised, each one reading
 * what the previous committed, so no two reservations can both take the
 * last room.
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
  createHolds: `CREATE TABLE IF NOT EXISTS {h} (
    key_id text NOT NULL REFERENCES {t} (id) ON DELETE CASCADE,
    hold_id text NOT NULL,
    kind text NOT NULL,
    tokens bigint NOT NULL,
    cost_micro bigint NOT NULL,
    expires_at bigint NOT NULL,
    PRIMARY KEY (key_id, hold_id)
  )`,
  insert:
    "INSERT INTO {t} (id, name, scopes, key_sha256, created_at, period_ms, cap_tokens, cap_cost_micro, cap_runs, cap_rpm) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
  list: "SELECT * FROM {t} ORDER BY created_at, name",
  find: "SELECT * FROM {t} WHERE id = $1",
  revoke: "DELETE FROM {t} WHERE name = $1",
  lockKey: "SELECT * FROM {t} WHERE id = $1 FOR UPDATE",
  /** The database's clock in epoch ms: read after the lock, so the steps on one key see times in the order they run. */
  clock: "SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now",
  dropExpired: "DELETE FROM {h} WHERE key_id = $1 AND expires_at <= $2 RETURNING hold_id, kind, tokens, cost_micro, expires_at",
  expired: "SELECT hold_id, kind, tokens, cost_micro, expires_at FROM {h} WHERE key_id = $1 AND expires_at <= $2",
  takeHold: "DELETE FROM {h} WHERE key_id = $1 AND hold_id = $2 RETURNING hold_id, kind, tokens, cost_micro, expires_at",
  insertHold: "INSERT INTO {h} (key_id, hold_id, kind, tokens, cost_micro, expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
  writeSpend:
    "UPDATE {t} SET window_start = $2, tokens_spent = $3, tokens_reserved = $4, cost_spent_micro = $5, cost_reserved_micro = $6, active_runs = $7, minute_start = $8, minute_count = $9 WHERE id = $1",
};

/** A hold row as pg returns it. @internal */
export interface PostgresHoldRow {
  hold_id: string;
  kind: string;
  tokens: string;
  cost_micro: string;
  expires_at: string;
}

/** The hold of a row. @internal */
export function holdOfRow(row: PostgresHoldRow): SpendHold {
  return { holdId: row.hold_id, kind: row.kind === "run" ? "run" : "request", tokens: Number(row.tokens), costMicroUsd: Number(row.cost_micro), expiresAt: Number(row.expires_at) };
}

/** The values of {@link KEY_SQL.writeSpend} for key `id`'s `spend`. @internal */
export function spendValues(id: string, spend: KeySpend): unknown[] {
  return [id, spend.windowStart, spend.tokensSpent, spend.tokensReserved, spend.costSpentMicroUsd, spend.costReservedMicroUsd, spend.activeRuns, spend.minuteStart, spend.minuteCount];
}

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
