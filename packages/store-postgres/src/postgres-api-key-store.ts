import { Pool, type PoolConfig } from "pg";
import { currentSpend, spendRefusal, type KeySpend, type SpendCaps, type SpendRefusal, type StoredSpend } from "@rein/core";
import { PostgresStoreError } from "./postgres-errors";
import type { PostgresConnectionConfig } from "./postgres-store-options";
import { checkKeyOptions, mintKey, KEY_SCOPES, type KeyScope } from "./postgres-api-key-format";
import { KEY_SQL, capColumns, capsOfRow, spendOfRow, type PostgresKeyRow } from "./postgres-api-key-sql";

/**
 * Options of {@link PostgresApiKeyStore}: `connectionString` or `pool`
 * (connection settings), not both.
 * @example
 * ```ts
 * new PostgresApiKeyStore({ connectionString: "postgres://rein:secret@db:5432/app" });
 * ```
 */
export interface PostgresApiKeyStoreOptions {
  /** A `postgres://user:password@host:port/database` URL. */
  readonly connectionString?: string;
  /** Connection settings (pg's `PoolConfig` fields). */
  readonly pool?: PostgresConnectionConfig;
  /** The schema of the `rein_api_keys` table; created when missing. Servers that share it share keys and spend. @default "rein" */
  readonly schema?: string;
  /** Connections of the store's pool. @default 4 */
  readonly maxConnections?: number;
}

/** A key as this store keeps it: `@rein/server`'s `StoredApiKey`. */
interface StoredKey {
  readonly id: string;
  readonly name: string;
  readonly scopes: readonly KeyScope[];
  readonly createdAt: number;
  readonly sha256: string;
  readonly caps?: SpendCaps;
}

/** A key as it is listed (no hash): `@rein/server`'s `ApiKeyRecord`. */
type KeyRecord = Omit<StoredKey, "sha256">;

/**
 * API keys of `rein serve --auth` in PostgreSQL (`@rein/server`'s
 * `ApiKeyStore`): a `rein_api_keys` table of its own (hashes only, never a
 * key) with each key's spend caps and spend, so every server on the
 * database authenticates the same keys and holds each key to one cap.
 * Each reservation is one conditional `UPDATE`: the check that the key's
 * spend, what requests in flight hold and the new estimate stay within its
 * cap, and the change, are one atomic step (see `KEY_SQL`). Failures of
 * the database are {@link PostgresStoreError}s (a server answers 503).
 * @example
 * ```ts
 * const keys = new PostgresApiKeyStore({ connectionString: process.env.DATABASE_URL });
 * const { key } = await keys.create({ name: "ci", scopes: ["run", "read"], caps: { tokens: 1_000_000 } });
 * createServer({ entries, store, auth: { keys } });
 * ```
 */
export class PostgresApiKeyStore {
  private readonly pool: Pool;
  private readonly table: string;
  private readonly location: string;
  private ready: Promise<void> | undefined;

  constructor(options: PostgresApiKeyStoreOptions) {
    if (typeof options !== "object" || options === null) throw new TypeError("PostgresApiKeyStore(options): options must be { connectionString } or { pool }");
    if (options.connectionString !== undefined && options.pool !== undefined) throw new TypeError("PostgresApiKeyStore: cannot provide both connectionString and pool; pass one of them");
    if (options.connectionString !== undefined && (typeof options.connectionString !== "string" || options.connectionString === "")) {
      throw new TypeError("PostgresApiKeyStore: connectionString must be a non-empty string such as 'postgres://user:password@host:5432/database'");
    }
    const schema = options.schema ?? "rein";
    if (typeof schema !== "string" || !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) {
      throw new TypeError("PostgresApiKeyStore: schema must be a PostgreSQL identifier: letters, digits and _, not starting with a digit, at most 63 characters");
    }
    const max = options.maxConnections ?? 4;
    if (!Number.isInteger(max) || max < 1) throw new TypeError(`PostgresApiKeyStore: maxConnections must be an integer >= 1, not ${String(max).slice(0, 40)}`);
    const config: PoolConfig = { application_name: "rein-api-keys", ...(options.connectionString !== undefined ? { connectionString: options.connectionString } : options.pool), max };
    this.pool = new Pool(config);
    // An idle connection the server dropped is an error event of the pool: without a listener it would end the process.
    this.pool.on("error", () => undefined);
    this.table = `"${schema}".rein_api_keys`;
    this.location = `schema ${schema}`;
  }

  /** Creates a key (a name in use is a `TypeError`); the key is in the answer only. */
  async create(options: { name: string; scopes: readonly KeyScope[]; caps?: SpendCaps }): Promise<{ key: string; record: KeyRecord }> {
    const { scopes, caps } = checkKeyOptions(options);
    const { id, key, sha256 } = mintKey();
    const stored: StoredKey = { id, name: options.name, scopes, createdAt: Date.now(), sha256, ...(caps === undefined ? {} : { caps }) };
    try {
      await this.query(KEY_SQL.insert, [id, stored.name, scopes.join(","), sha256, stored.createdAt, ...capColumns(caps)]);
    } catch (error) {
      if ((error as PostgresStoreError).code === "23505") throw new TypeError(`PostgresApiKeyStore.create: a key named '${options.name}' exists (revoke it first)`);
      throw error;
    }
    return { key, record: recordOf(stored) };
  }

  /** The keys, oldest first. */
  async list(): Promise<readonly KeyRecord[]> {
    return (await this.query<PostgresKeyRow>(KEY_SQL.list, [])).map((row) => recordOf(storedOf(row)));
  }

  /** Deletes the key of `name`; false when there was none. */
  async revoke(name: string): Promise<boolean> {
    return (await this.run(KEY_SQL.revoke, [name])) > 0;
  }

  /** The stored key of `id`, or undefined. */
  async find(id: string): Promise<StoredKey | undefined> {
    const row = await this.row(id);
    return row === undefined ? undefined : storedOf(row);
  }

  /** Starts a run of key `id` under its caps, atomically (a run slot, one run of this minute), or says which cap refuses. */
  async startRun(id: string, now = Date.now()): Promise<SpendRefusal | undefined> {
    return this.change(id, now, undefined, () => this.run(KEY_SQL.startRun, [id, now]));
  }

  /** Gives back the run slot {@link startRun} took. */
  async endRun(id: string): Promise<void> {
    await this.run(KEY_SQL.endRun, [id]);
  }

  /** Holds `amount` for one model request of key `id` if its caps allow, in one atomic UPDATE, or says which cap refuses. */
  async reserve(id: string, amount: StoredSpend, now = Date.now()): Promise<SpendRefusal | undefined> {
    return this.change(id, now, amount, () => this.run(KEY_SQL.reserve, [id, now, amount.tokens, amount.costMicroUsd]));
  }

  /** Gives back `reserved` and charges `used` to the current period. */
  async settle(id: string, reserved: StoredSpend, used: StoredSpend, now = Date.now()): Promise<void> {
    await this.run(KEY_SQL.settle, [id, now, reserved.tokens, reserved.costMicroUsd, used.tokens, used.costMicroUsd]);
  }

  /** Key `id`'s spend as of `now`, or undefined for no such key. */
  async spendOf(id: string, now = Date.now()): Promise<KeySpend | undefined> {
    const row = await this.row(id);
    return row === undefined ? undefined : currentSpend(capsOfRow(row) ?? {}, spendOfRow(row), now);
  }

  /** Closes the pool. */
  async close(): Promise<void> {
    await this.pool.end();
  }

  private async row(id: string): Promise<PostgresKeyRow | undefined> {
    return (await this.query<PostgresKeyRow>(KEY_SQL.find, [id]))[0];
  }

  /** One conditional UPDATE; when it changed nothing, the row says why (tried again if it allows it by then). */
  private async change(id: string, now: number, asked: StoredSpend | undefined, update: () => Promise<number>): Promise<SpendRefusal | undefined> {
    // Bounded: each retry means another connection gave room back in between, which cannot go on for ever.
    for (let attempt = 0; attempt < 16; attempt++) {
      if ((await update()) > 0) return undefined;
      const row = await this.row(id);
      if (row === undefined) return { dimension: "revoked", used: 0, asked: 0, limit: 0, retryAfterSeconds: 1 };
      const caps = capsOfRow(row) ?? {};
      const refusal = spendRefusal(caps, currentSpend(caps, spendOfRow(row), now), asked, now);
      if (refusal !== undefined) return refusal;
    }
    throw new Error(`API key ${id}: its spend row changed under 16 attempts in a row; retry the request`);
  }

  private async run(sql: string, values: unknown[]): Promise<number> {
    await this.migrated();
    return (await this.send(sql, values)).rowCount ?? 0;
  }

  private async query<R>(sql: string, values: unknown[]): Promise<R[]> {
    await this.migrated();
    return (await this.send(sql, values)).rows as R[];
  }

  private async send(sql: string, values: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }> {
    try {
      return await this.pool.query(sql.replaceAll("{t}", this.table), values);
    } catch (error) {
      const code = (error as { code?: string }).code;
      throw new PostgresStoreError(`PostgreSQL refused an API key statement (${this.location}): ${(error as Error).message}`, this.location, code, { cause: error });
    }
  }

  /** The schema and table, made once per store (under an advisory lock: two processes starting at once). */
  private migrated(): Promise<void> {
    this.ready ??= (async () => {
      const client = await this.pool.connect().catch((error: unknown) => {
        throw new PostgresStoreError(`Cannot reach PostgreSQL for the API keys (${this.location}): ${(error as Error).message}`, this.location, (error as { code?: string }).code, { cause: error });
      });
      try {
        await client.query("BEGIN");
        await client.query("SELECT pg_advisory_xact_lock(hashtext('rein_api_keys'))");
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${this.table.split(".")[0]}`);
        await client.query(KEY_SQL.create.replaceAll("{t}", this.table));
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw new PostgresStoreError(`Cannot create the API key table (${this.location}): ${(error as Error).message}`, this.location, (error as { code?: string }).code, { cause: error });
      } finally {
        client.release();
      }
    })().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }
}

function storedOf(row: PostgresKeyRow): StoredKey {
  const caps = capsOfRow(row);
  const scopes = row.scopes.split(",").filter((scope): scope is KeyScope => (KEY_SCOPES as readonly string[]).includes(scope));
  return { id: row.id, name: row.name, scopes, createdAt: Number(row.created_at), sha256: row.key_sha256, ...(caps === undefined ? {} : { caps }) };
}

function recordOf(stored: StoredKey): KeyRecord {
  return { id: stored.id, name: stored.name, scopes: stored.scopes, createdAt: stored.createdAt, ...(stored.caps === undefined ? {} : { caps: stored.caps }) };
}
