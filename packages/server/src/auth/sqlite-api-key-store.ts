import Database from "libsql";
import {
  DEFAULT_HOLD_TIMES,
  SessionStore,
  SessionStoreError,
  endRunStep,
  liveSpend,
  microUsd,
  reserveStep,
  settleStep,
  startRunStep,
  type HoldTimes,
  type KeySpend,
  type SpendCaps,
  type SpendHold,
  type SpendRefusal,
  type SpendStep,
  type StoredSpend,
} from "rein";
import { capsOf, checkCreateOptions, newApiKey, parseScopes, recordOf, type ApiKeyRecord, type ApiKeyStore, type CreateApiKeyOptions, type IssuedApiKey, type StoredApiKey } from "./api-key";
import { SPEND_COLUMNS, SQLITE_SPEND, capsOfRow, holdOfRow, spendOfRow, type HoldRow, type SpendRow } from "./sqlite-spend-sql";

/**
 * Options of {@link SqliteApiKeyStore}.
 * @example
 * ```ts
 * new SqliteApiKeyStore({ path: ".rein/sessions.db" });
 * ```
 */
export interface SqliteApiKeyStoreOptions {
  /** The SQLite session store file the keys live beside (created with the session schema when missing). */
  readonly path: string;
  /** How long a write waits for another connection's lock, in ms. @default 5_000 */
  readonly busyTimeoutMs?: number;
  /** How long a reservation and a run slot count when never given back (their process died). @default DEFAULT_HOLD_TIMES (10 min, 1 h) */
  readonly holdTimes?: HoldTimes;
}

interface Row extends SpendRow {
  id: string;
  name: string;
  scopes: string;
  key_sha256: string;
  created_at: number;
}

const COLUMNS = `id, name, scopes, key_sha256, created_at, ${SPEND_COLUMNS}`;

/**
 * API keys in a table of their own (`rein_api_keys`: id, name, scopes,
 * SHA-256 of the key, creation time, spend caps and the key's spend) in a SQLite session store's file,
 * opened on a connection of its own: the session store's interface is not
 * involved. A file that is not yet a session store gets the session schema
 * first (a session store refuses a file holding tables it did not create).
 * @example
 * ```ts
 * const keys = new SqliteApiKeyStore({ path: ".rein/sessions.db" });
 * await serve({ entries, store: new SessionStore({ path: ".rein/sessions.db" }), auth: { keys } });
 * ```
 */
export class SqliteApiKeyStore implements ApiKeyStore {
  private readonly db: Database.Database;
  private readonly path: string;
  private readonly holdTimes: HoldTimes;

  constructor(options: SqliteApiKeyStoreOptions) {
    if (typeof options !== "object" || options === null || typeof options.path !== "string" || options.path === "") {
      throw new TypeError("SqliteApiKeyStore(options): path must name the SQLite session store file");
    }
    if (options.path !== ":memory:") ensureSessionSchema(options.path);
    this.path = options.path;
    this.holdTimes = options.holdTimes ?? DEFAULT_HOLD_TIMES;
    this.db = new Database(options.path, { timeout: options.busyTimeoutMs ?? 5_000 });
    this.db.exec(
      "CREATE TABLE IF NOT EXISTS rein_api_keys (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, scopes TEXT NOT NULL, key_sha256 TEXT NOT NULL, created_at INTEGER NOT NULL)",
    );
    // A table made before spend caps gains their columns (each UPDATE on it is atomic across connections).
    const columns = new Set((this.db.prepare("PRAGMA table_info(rein_api_keys)").all() as { name: string }[]).map((column) => column.name));
    for (const [column, type] of SQLITE_SPEND.columns) {
      if (!columns.has(column)) this.db.exec(`ALTER TABLE rein_api_keys ADD COLUMN ${column} ${type}`);
    }
    this.db.exec(SQLITE_SPEND.holdsTable);
  }

  async create(options: CreateApiKeyOptions): Promise<IssuedApiKey> {
    const scopes = checkCreateOptions("SqliteApiKeyStore.create", options);
    const caps = capsOf("SqliteApiKeyStore.create", options);
    const { id, key, sha256 } = newApiKey();
    const stored: StoredApiKey = { id, name: options.name, scopes, createdAt: Date.now(), sha256, ...(caps === undefined ? {} : { caps }) };
    try {
      this.db
        .prepare("INSERT INTO rein_api_keys (id, name, scopes, key_sha256, created_at, period_ms, cap_tokens, cap_cost_micro, cap_runs, cap_rpm) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .run(id, stored.name, scopes.join(","), sha256, stored.createdAt, ...capColumns(caps));
    } catch (error) {
      if (/UNIQUE/.test(String((error as Error).message))) throw new TypeError(`SqliteApiKeyStore.create: a key named '${options.name}' exists (revoke it first)`);
      throw error;
    }
    return { key, record: recordOf(stored) };
  }

  async list(): Promise<readonly ApiKeyRecord[]> {
    const rows = this.db.prepare(`SELECT ${COLUMNS} FROM rein_api_keys ORDER BY created_at, name`).all() as Row[];
    return rows.map((row) => recordOf(storedOf(row)));
  }

  async revoke(name: string): Promise<boolean> {
    const row = this.db.prepare("SELECT id FROM rein_api_keys WHERE name = ?").get(name) as { id: string } | undefined;
    if (row === undefined) return false;
    this.db.prepare(SQLITE_SPEND.deleteHolds).run({ id: row.id });
    return this.db.prepare("DELETE FROM rein_api_keys WHERE id = ?").run(row.id).changes > 0;
  }

  async find(id: string): Promise<StoredApiKey | undefined> {
    const row = this.row(id);
    return row === undefined ? undefined : storedOf(row);
  }

  async startRun(id: string, holdId: string, now = Date.now()): Promise<SpendRefusal | undefined> {
    return this.step(id, now, (caps, spend) => startRunStep(caps, spend, holdId, this.holdTimes, now));
  }

  async endRun(id: string, holdId: string, now = Date.now()): Promise<void> {
    this.step(id, now, (_, spend) => ({ spend: endRunStep(spend, this.take(id, holdId)) }));
  }

  async reserve(id: string, hold: StoredSpend & { readonly holdId: string }, now = Date.now()): Promise<SpendRefusal | undefined> {
    return this.step(id, now, (caps, spend) => reserveStep(caps, spend, hold.holdId, hold, this.holdTimes, now));
  }

  async settle(id: string, holdId: string, used: StoredSpend, now = Date.now()): Promise<void> {
    this.step(id, now, (_, spend) => ({ spend: settleStep(spend, this.take(id, holdId), used) }));
  }

  async spendOf(id: string, now = Date.now()): Promise<KeySpend | undefined> {
    const row = this.row(id);
    if (row === undefined) return undefined;
    const expired = (this.db.prepare(SQLITE_SPEND.expired).all({ id, now }) as HoldRow[]).map(holdOfRow);
    return liveSpend(capsOfRow(row) ?? {}, spendOfRow(row), expired, now);
  }

  /**
   * One step of key `id`'s spend in one `BEGIN IMMEDIATE` transaction: its
   * expired holds dropped, `step` applied to its live spend, the spend and
   * the new hold written. A refusal writes only the dropped holds.
   */
  private step(id: string, now: number, step: (caps: SpendCaps, spend: KeySpend) => SpendStep): SpendRefusal | undefined {
    return this.spend(() => {
      this.db.exec("BEGIN IMMEDIATE");
      try {
        const row = this.row(id);
        if (row === undefined) {
          this.db.exec("COMMIT");
          return { dimension: "revoked", used: 0, asked: 0, limit: 0, retryAfterSeconds: 1 };
        }
        const caps = capsOfRow(row) ?? {};
        const expired = (this.db.prepare(SQLITE_SPEND.expired).all({ id, now }) as HoldRow[]).map(holdOfRow);
        if (expired.length > 0) this.db.prepare(SQLITE_SPEND.deleteExpired).run({ id, now });
        const live = liveSpend(caps, spendOfRow(row), expired, now);
        const outcome = step(caps, live);
        const next = "refusal" in outcome ? live : outcome.spend;
        this.db.prepare(SQLITE_SPEND.writeSpend).run({ id, ...next });
        if (!("refusal" in outcome) && outcome.hold !== undefined) this.insert(id, outcome.hold);
        this.db.exec("COMMIT");
        return "refusal" in outcome ? outcome.refusal : undefined;
      } catch (error) {
        if (this.db.inTransaction) this.db.exec("ROLLBACK");
        throw error;
      }
    });
  }

  private insert(id: string, hold: SpendHold): void {
    this.db.prepare(SQLITE_SPEND.insertHold).run({ id, holdId: hold.holdId, kind: hold.kind, tokens: hold.tokens, cost: hold.costMicroUsd, expiresAt: hold.expiresAt });
  }

  /** Removes and returns the hold `holdId` of key `id`, if it is still held (inside a step's transaction). */
  private take(id: string, holdId: string): SpendHold | undefined {
    const row = this.db.prepare(SQLITE_SPEND.findHold).get({ id, holdId }) as HoldRow | undefined;
    if (row === undefined) return undefined;
    this.db.prepare(SQLITE_SPEND.deleteHold).run({ id, holdId });
    return holdOfRow(row);
  }

  /** A spend statement: a failure of the file (busy past busyTimeoutMs, read-only, closed) is a `SessionStoreError`, which a server answers 503. */
  private spend<R>(statement: () => R): R {
    try {
      return statement();
    } catch (error) {
      throw new SessionStoreError(`SQLite refused an API key spend statement (${this.path}): ${(error as Error).message}`, this.path, { cause: error });
    }
  }

  private row(id: string): Row | undefined {
    return this.db.prepare(`SELECT ${COLUMNS} FROM rein_api_keys WHERE id = ?`).get(id) as Row | undefined;
  }


  async close(): Promise<void> {
    this.db.close();
  }
}

function storedOf(row: Row): StoredApiKey {
  const caps = capsOfRow(row);
  return { id: row.id, name: row.name, scopes: parseScopes(row.scopes), createdAt: Number(row.created_at), sha256: row.key_sha256, ...(caps === undefined ? {} : { caps }) };
}

/** The cap columns of `caps`, in the order of the INSERT (null: no cap). */
function capColumns(caps: SpendCaps | undefined): (number | null)[] {
  return [caps?.periodMs ?? 86_400_000, caps?.tokens ?? null, caps?.costUsd === undefined ? null : microUsd(caps.costUsd), caps?.concurrentRuns ?? null, caps?.requestsPerMinute ?? null];
}

/** Lets `SessionStore` create its schema in a file that has none yet (its own checks refuse a foreign file). */
function ensureSessionSchema(path: string): void {
  const probe = new Database(path);
  let migrated: boolean;
  try {
    migrated = probe.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rein_migrations'").get() !== undefined;
  } finally {
    probe.close();
  }
  if (!migrated) new SessionStore({ path, shutdownFlush: false }).close();
}
