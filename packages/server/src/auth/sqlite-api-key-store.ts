import Database from "libsql";
import { SessionStore } from "rein";
import { checkCreateOptions, newApiKey, parseScopes, recordOf, type ApiKeyRecord, type ApiKeyStore, type CreateApiKeyOptions, type IssuedApiKey, type StoredApiKey } from "./api-key";

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

interface Row {
  id: string;
  name: string;
  scopes: string;
  key_sha256: string;
  created_at: number;
}

/**
 * API keys in a table of their own (`rein_api_keys`: id, name, scopes,
 * SHA-256 of the key, creation time) in a SQLite session store's file,
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

  constructor(options: SqliteApiKeyStoreOptions) {
    if (typeof options !== "object" || options === null || typeof options.path !== "string" || options.path === "") {
      throw new TypeError("SqliteApiKeyStore(options): path must name the SQLite session store file");
    }
    if (options.path !== ":memory:") ensureSessionSchema(options.path);
    this.db = new Database(options.path, { timeout: options.busyTimeoutMs ?? 5_000 });
    this.db.exec(
      "CREATE TABLE IF NOT EXISTS rein_api_keys (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, scopes TEXT NOT NULL, key_sha256 TEXT NOT NULL, created_at INTEGER NOT NULL)",
    );
  }

  async create(options: CreateApiKeyOptions): Promise<IssuedApiKey> {
    const scopes = checkCreateOptions("SqliteApiKeyStore.create", options);
    const { id, key, sha256 } = newApiKey();
    const stored: StoredApiKey = { id, name: options.name, scopes, createdAt: Date.now(), sha256 };
    try {
      this.db.prepare("INSERT INTO rein_api_keys (id, name, scopes, key_sha256, created_at) VALUES (?, ?, ?, ?, ?)").run(id, stored.name, scopes.join(","), sha256, stored.createdAt);
    } catch (error) {
      if (/UNIQUE/.test(String((error as Error).message))) throw new TypeError(`SqliteApiKeyStore.create: a key named '${options.name}' exists (revoke it first)`);
      throw error;
    }
    return { key, record: recordOf(stored) };
  }

  async list(): Promise<readonly ApiKeyRecord[]> {
    const rows = this.db.prepare("SELECT id, name, scopes, key_sha256, created_at FROM rein_api_keys ORDER BY created_at, name").all() as Row[];
    return rows.map((row) => recordOf(storedOf(row)));
  }

  async revoke(name: string): Promise<boolean> {
    return this.db.prepare("DELETE FROM rein_api_keys WHERE name = ?").run(name).changes > 0;
  }

  async find(id: string): Promise<StoredApiKey | undefined> {
    const row = this.db.prepare("SELECT id, name, scopes, key_sha256, created_at FROM rein_api_keys WHERE id = ?").get(id) as Row | undefined;
    return row === undefined ? undefined : storedOf(row);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

function storedOf(row: Row): StoredApiKey {
  return { id: row.id, name: row.name, scopes: parseScopes(row.scopes), createdAt: Number(row.created_at), sha256: row.key_sha256 };
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
