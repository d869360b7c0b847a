import { Pool, type PoolClient, type PoolConfig } from "pg";
import {
  DEFAULT_HOLD_TIMES,
  endRunStep,
  liveSpend,
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
} from "@rein/guard";
import { PostgresStoreError } from "./postgres-errors";
import type { PostgresConnectionConfig } from "./postgres-store-options";
import { checkKeyOptions, mintKey, KEY_SCOPES, type KeyScope } from "./postgres-api-key-format";
import { KEY_SQL, capColumns, capsOfRow, holdOfRow, spendOfRow, spendValues, type PostgresHoldRow, type PostgresKeyRow } from "./postgres-api-key-sql";

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
  /** How long a reservation and a run slot count when never given back (their process died). @default DEFAULT_HOLD_TIMES (10 min, 1 h) */
  readonly holdTimes?: HoldTimes;
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
 * Each spend step is one transaction on the key's locked row: the check
 * that the key's spend, what requests in flight hold and the new estimate
 * stay within its cap, and the change, are one atomic step, timed by the
 * database's clock (never a server's own); what a process that died still
 * held expires (`holdTimes`). Failures of
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
  private readonly holds: string;
  private readonly location: string;
  private readonly holdTimes: HoldTimes;
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
    this.holds = `"${schema}".rein_api_key_holds`;
    this.holdTimes = options.holdTimes ?? DEFAULT_HOLD_TIMES;
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

  // Each step below runs at `now` when one is given (a test's clock), else at the database's clock,
  // read inside the step's transaction: every server on the database then shares one clock for
  // the period and minute windows and for hold expiry, whatever its own clock says.

  /** Starts a run of key `id` under its caps, atomically (a run slot `holdId`, one run of this minute), or says which cap refuses. */
  async startRun(id: string, holdId: string, now?: number): Promise<SpendRefusal | undefined> {
    return this.step(id, now, async (caps, spend, at) => startRunStep(caps, spend, holdId, this.holdTimes, at));
  }

  /** Gives back the run slot `holdId` (nothing when it expired meanwhile). */
  async endRun(id: string, holdId: string, now?: number): Promise<void> {
    await this.step(id, now, async (_, spend, _at, client) => ({ spend: endRunStep(spend, await this.take(client, id, holdId)) }));
  }

  /** Holds `hold` for one model request of key `id` if its caps allow, in one transaction on the key's locked row, or says which cap refuses. */
  async reserve(id: string, hold: StoredSpend & { readonly holdId: string }, now?: number): Promise<SpendRefusal | undefined> {
    return this.step(id, now, async (caps, spend, at) => reserveStep(caps, spend, hold.holdId, hold, this.holdTimes, at));
  }

  /** Gives back the hold `holdId` (if it has not expired) and charges `used` to the current period. */
  async settle(id: string, holdId: string, used: StoredSpend, now?: number): Promise<void> {
    await this.step(id, now, async (_, spend, _at, client) => ({ spend: settleStep(spend, await this.take(client, id, holdId), used) }));
  }

  /** Key `id`'s spend as of `now` (default: the database's clock; expired holds not counted), or undefined for no such key. */
  async spendOf(id: string, now?: number): Promise<KeySpend | undefined> {
    const row = await this.row(id);
    if (row === undefined) return undefined;
    const at = now ?? Number((await this.query<{ now: string }>(KEY_SQL.clock, []))[0]!.now);
    const expired = (await this.query<PostgresHoldRow>(KEY_SQL.expired, [id, at])).map(holdOfRow);
    return liveSpend(capsOfRow(row) ?? {}, spendOfRow(row), expired, at);
  }

  /** Closes the pool. */
  async close(): Promise<void> {
    await this.pool.end();
  }

  private async row(id: string): Promise<PostgresKeyRow | undefined> {
    return (await this.query<PostgresKeyRow>(KEY_SQL.find, [id]))[0];
  }

  /**
   * One step of key `id`'s spend in one transaction: the key's row locked
   * (`FOR UPDATE`), the time read (`now`, else the database's clock, once
   * the lock is held), its expired holds dropped, `step` applied to its
   * live spend at that time, the spend and the new hold written. A refusal
   * writes only the dropped holds.
   */
  private async step(id: string, now: number | undefined, step: (caps: SpendCaps, spend: KeySpend, at: number, client: PoolClient) => Promise<SpendStep>): Promise<SpendRefusal | undefined> {
    await this.migrated();
    const client = await this.pool.connect().catch((error: unknown) => {
      throw this.fault("Cannot reach PostgreSQL for the API keys", error);
    });
    const sql = (text: string) => text.replaceAll("{t}", this.table).replaceAll("{h}", this.holds);
    try {
      await client.query("BEGIN");
      const row = (await client.query<PostgresKeyRow>(sql(KEY_SQL.lockKey), [id])).rows[0];
      if (row === undefined) {
        await client.query("COMMIT");
        return { dimension: "revoked", used: 0, asked: 0, limit: 0, retryAfterSeconds: 1 };
      }
      const caps = capsOfRow(row) ?? {};
      const at = now ?? Number((await client.query<{ now: string }>(KEY_SQL.clock)).rows[0]!.now);
      const expired = (await client.query<PostgresHoldRow>(sql(KEY_SQL.dropExpired), [id, at])).rows.map(holdOfRow);
      const live = liveSpend(caps, spendOfRow(row), expired, at);
      const outcome = await step(caps, live, at, client);
      const next = "refusal" in outcome ? live : outcome.spend;
      await client.query(sql(KEY_SQL.writeSpend), spendValues(id, next));
      const hold = "refusal" in outcome ? undefined : outcome.hold;
      if (hold !== undefined) await client.query(sql(KEY_SQL.insertHold), [id, hold.holdId, hold.kind, hold.tokens, hold.costMicroUsd, hold.expiresAt]);
      await client.query("COMMIT");
      return "refusal" in outcome ? outcome.refusal : undefined;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw PostgresStoreError.isInstance(error) ? error : this.fault("PostgreSQL refused an API key spend step", error);
    } finally {
      client.release();
    }
  }

  /** Removes and returns the hold `holdId` of key `id`, if it is still held (inside a step's transaction). */
  private async take(client: PoolClient, id: string, holdId: string): Promise<SpendHold | undefined> {
    const row = (await client.query<PostgresHoldRow>(KEY_SQL.takeHold.replaceAll("{h}", this.holds), [id, holdId])).rows[0];
    return row === undefined ? undefined : holdOfRow(row);
  }

  private fault(what: string, error: unknown): PostgresStoreError {
    return new PostgresStoreError(`${what} (${this.location}): ${(error as Error).message}`, this.location, (error as { code?: string }).code, { cause: error });
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
      return await this.pool.query(sql.replaceAll("{t}", this.table).replaceAll("{h}", this.holds), values);
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
        await client.query(KEY_SQL.createHolds.replaceAll("{t}", this.table).replaceAll("{h}", this.holds));
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
