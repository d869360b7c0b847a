import Database from "libsql";
import { SessionStore, SessionStoreError, currentSpend, microUsd, spendRefusal, type KeySpend, type SpendCaps, type SpendRefusal, type StoredSpend } from "rein";
import { capsOf, checkCreateOptions, newApiKey, parseScopes, recordOf, type ApiKeyRecord, type ApiKeyStore, type CreateApiKeyOptions, type IssuedApiKey, type StoredApiKey } from "./api-key";
import { SPEND_COLUMNS, SQLITE_SPEND, capsOfRow, spendOfRow, type SpendRow } from "./sqlite-spend-sql";

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

  constructor(options: SqliteApiKeyStoreOptions) {
    if (typeof options !== "object" || options === null || typeof options.path !== "string" || options.path === "") {
      throw new TypeError("SqliteApiKeyStore(options): path must name the SQLite session store file");
    }
    if (options.path !== ":memory:") ensureSessionSchema(options.path);
    this.path = options.path;
    this.db = new Database(options.path, { timeout: options.busyTimeoutMs ?? 5_000 });
    this.db.exec(
      "CREATE TABLE IF NOT EXISTS rein_api_keys (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, scopes TEXT NOT NULL, key_sha256 TEXT NOT NULL, created_at INTEGER NOT NULL)",
    );
    // A table made before spend caps gains their columns (each UPDATE on it is atomic across connections).
    const columns = new Set((this.db.prepare("PRAGMA table_info(rein_api_keys)").all() as { name: string }[]).map((column) => column.name));
    for (const [column, type] of SQLITE_SPEND.columns) {
      if (!columns.has(column)) this.db.exec(`ALTER TABLE rein_api_keys ADD COLUMN ${column} ${type}`);
    }
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
    return this.db.prepare("DELETE FROM rein_api_keys WHERE name = ?").run(name).changes > 0;
  }

  async find(id: string): Promise<StoredApiKey | undefined> {
    const row = this.row(id);
    return row === undefined ? undefined : storedOf(row);
  }

  async startRun(id: string, now = Date.now()): Promise<SpendRefusal | undefined> {
    return this.spend(() => this.change(id, now, undefined, () => this.db.prepare(SQLITE_SPEND.startRun).run({ id, now }).changes));
  }

  async endRun(id: string): Promise<void> {
    this.spend(() => this.db.prepare(SQLITE_SPEND.endRun).run({ id }));
  }

  async reserve(id: string, amount: StoredSpend, now = Date.now()): Promise<SpendRefusal | undefined> {
    return this.spend(() => this.change(id, now, amount, () => this.db.prepare(SQLITE_SPEND.reserve).run({ id, now, tokens: amount.tokens, cost: amount.costMicroUsd }).changes));
  }

  async settle(id: string, reserved: StoredSpend, used: StoredSpend, now = Date.now()): Promise<void> {
    this.spend(() => this.db.prepare(SQLITE_SPEND.settle).run({ id, now, tokens: reserved.tokens, cost: reserved.costMicroUsd, usedTokens: used.tokens, usedCost: used.costMicroUsd }));
  }

  async spendOf(id: string, now = Date.now()): Promise<KeySpend | undefined> {
    const row = this.row(id);
    return row === undefined ? undefined : currentSpend(capsOfRow(row) ?? {}, spendOfRow(row), now);
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

  /**
   * Runs `update` (one conditional UPDATE: it changes the row only when the
   * caps allow); when it changed nothing, reads the row to say why. A row
   * that allows it by then (another connection gave room back meanwhile) is
   * tried again.
   */
  private change(id: string, now: number, asked: StoredSpend | undefined, update: () => number): SpendRefusal | undefined {
    // Bounded: each retry means another connection gave room back in between, which cannot go on for ever.
    for (let attempt = 0; attempt < 16; attempt++) {
      if (update() > 0) return undefined;
      const row = this.row(id);
      if (row === undefined) return { dimension: "revoked", used: 0, asked: 0, limit: 0, retryAfterSeconds: 1 };
      const caps = capsOfRow(row) ?? {};
      const refusal = spendRefusal(caps, currentSpend(caps, spendOfRow(row), now), asked, now);
      if (refusal !== undefined) return refusal;
    }
    throw new Error(`API key ${id}: its spend row changed under 16 attempts in a row; retry the request`);
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
