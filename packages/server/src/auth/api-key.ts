import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { checkSpendCaps, capsAnything, type KeySpend, type SpendCaps, type SpendRefusal, type StoredSpend } from "rein";

/**
 * What a key may do: `run` starts, resumes and cancels its own runs; `read`
 * reads its own sessions, graphs and runs; `mint` may be given a root budget
 * without `X-Agent-Policy` when the server mints them and a policy secret is
 * set; `admin` may do all of that and sees and steers every key's runs and
 * sessions.
 * @example
 * ```ts
 * await keys.create({ name: "ci", scopes: ["run", "read"] });
 * ```
 */
export type ApiKeyScope = "run" | "read" | "mint" | "admin";

/** Every {@link ApiKeyScope}, in the order they are listed. */
export const API_KEY_SCOPES: readonly ApiKeyScope[] = ["run", "read", "mint", "admin"];

/**
 * A key as stored and listed: never the key itself, nor its hash.
 * @example
 * ```ts
 * for (const key of await keys.list()) console.log(key.name, key.scopes.join(","));
 * ```
 */
export interface ApiKeyRecord {
  /** The key's public id: 16 hex characters, also part of the key (`rein_<id>_…`); runs and sessions are owned by it. */
  readonly id: string;
  /** A unique name chosen by whoever created the key (`ci`). */
  readonly name: string;
  readonly scopes: readonly ApiKeyScope[];
  /** Epoch milliseconds. */
  readonly createdAt: number;
  /** What the key may spend (absent: no caps). */
  readonly caps?: SpendCaps;
}

/**
 * What an {@link ApiKeyStore} keeps of a key: its record and the SHA-256 of
 * the whole key (hex), never the key.
 */
export interface StoredApiKey extends ApiKeyRecord {
  readonly sha256: string;
}

/**
 * A key just created: `key` is shown once (nothing stored can give it back).
 * @example
 * ```ts
 * const { key } = await keys.create({ name: "ci", scopes: ["run"] });
 * ```
 */
export interface IssuedApiKey {
  readonly key: string;
  readonly record: ApiKeyRecord;
}

/**
 * Where a server's API keys are kept: only hashes. `InMemoryApiKeyStore`
 * (tests), `SqliteApiKeyStore` (a table beside a SQLite session store) and
 * `PostgresApiKeyStore` implement it; {@link verifyApiKey} checks a
 * presented key against any of them.
 * @example
 * ```ts
 * const keys = new SqliteApiKeyStore({ path: ".rein/sessions.db" });
 * const { key } = await keys.create({ name: "ci", scopes: ["run", "read"] });
 * ```
 */
export interface ApiKeyStore {
  /** Creates a key; a name already in use is a `TypeError`. */
  create(options: CreateApiKeyOptions): Promise<IssuedApiKey>;
  /** The keys, oldest first. */
  list(): Promise<readonly ApiKeyRecord[]>;
  /** Deletes the key of `name`; false when there was none. Requests with it are 401 from then on. */
  revoke(name: string): Promise<boolean>;
  /** The stored key of `id`, or undefined. */
  find(id: string): Promise<StoredApiKey | undefined>;
  /**
   * Starts a run of key `id` under its caps, atomically: holds a run slot
   * (`holdId`, chosen by the caller) and counts the run in its minute —
   * unless the key has `concurrentRuns` in flight, has started
   * `requestsPerMinute` runs this minute, or has no tokens or cost left
   * this period; then nothing is held and the refusal says why (`rein`'s
   * `spendRefusal`). A slot not given back by {@link endRun} expires (the
   * store's `holdTimes.runMs`), so a process that died does not keep it.
   */
  startRun(id: string, holdId: string, now?: number): Promise<SpendRefusal | undefined>;
  /** Gives back the run slot `holdId` of {@link startRun} (nothing when it expired meanwhile). */
  endRun(id: string, holdId: string, now?: number): Promise<void>;
  /**
   * Holds `hold` (an amount and the caller's `holdId`) for one model
   * request of key `id`, atomically with the check that what the key spent
   * this period, plus what requests in flight hold, plus this stays within
   * its caps: of several processes reserving at once on one store, no two
   * can both take the last room. A hold not settled expires
   * (`holdTimes.requestMs`).
   */
  reserve(id: string, hold: StoredSpend & { readonly holdId: string }, now?: number): Promise<SpendRefusal | undefined>;
  /** Gives back the hold `holdId` (if it has not expired) and charges `used` to the current period (a release: `used` zero). */
  settle(id: string, holdId: string, used: StoredSpend, now?: number): Promise<void>;
  /** Key `id`'s spend as of `now` (figures of an ended period read 0, expired holds not counted), or undefined for no such key. */
  spendOf(id: string, now?: number): Promise<KeySpend | undefined>;
  /** Releases what the store opened. */
  close(): Promise<void>;
}

/**
 * Options of {@link ApiKeyStore.create}.
 * @example
 * ```ts
 * { name: "ci", scopes: ["run", "read"] }
 * ```
 */
export interface CreateApiKeyOptions {
  /** 1-64 characters of A-Z a-z 0-9 . _ - */
  readonly name: string;
  /** At least one of {@link API_KEY_SCOPES}. */
  readonly scopes: readonly ApiKeyScope[];
  /** What the key may spend. @default no caps */
  readonly caps?: SpendCaps;
}

const NAME = /^[A-Za-z0-9._-]{1,64}$/;
const KEY = /^rein_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

/** @internal Checks `create`'s options (a `TypeError` naming the option) and returns the scopes without duplicates, in order. */
export function checkCreateOptions(owner: string, options: CreateApiKeyOptions): readonly ApiKeyScope[] {
  if (typeof options !== "object" || options === null) throw new TypeError(`${owner}: options must be { name, scopes }`);
  if (typeof options.name !== "string" || !NAME.test(options.name)) throw new TypeError(`${owner}: name must be 1-64 characters of A-Z a-z 0-9 . _ -`);
  if (!Array.isArray(options.scopes) || options.scopes.length === 0 || options.scopes.some((scope) => !API_KEY_SCOPES.includes(scope))) {
    throw new TypeError(`${owner}: scopes must be a non-empty list of ${API_KEY_SCOPES.join(", ")}`);
  }
  return API_KEY_SCOPES.filter((scope) => options.scopes.includes(scope));
}

/** @internal A new key (`rein_<16 hex id>_<43 base64url characters: 256 random bits>`) with its id and hash. */
export function newApiKey(): { id: string; key: string; sha256: string } {
  const id = randomBytes(8).toString("hex");
  const key = `rein_${id}_${randomBytes(32).toString("base64url")}`;
  return { id, key, sha256: sha256Hex(key) };
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** @internal The record of a stored key, without its hash. */
export function recordOf(stored: StoredApiKey): ApiKeyRecord {
  return { id: stored.id, name: stored.name, scopes: stored.scopes, createdAt: stored.createdAt, ...(stored.caps === undefined ? {} : { caps: stored.caps }) };
}

/** @internal `create`'s caps checked (a `TypeError` naming the field): undefined when they limit nothing. */
export function capsOf(owner: string, options: CreateApiKeyOptions): SpendCaps | undefined {
  const caps = checkSpendCaps(owner, options.caps);
  return capsAnything(caps) ? caps : undefined;
}

/** @internal Scopes read back from storage (comma-separated), unknown ones dropped. */
export function parseScopes(text: string): readonly ApiKeyScope[] {
  return text.split(",").filter((scope): scope is ApiKeyScope => API_KEY_SCOPES.includes(scope as ApiKeyScope));
}

/**
 * The record of the key `presented` is, or undefined: the key's id selects
 * the stored key, then the SHA-256 of what was presented is compared with
 * the stored one with `crypto.timingSafeEqual`. A malformed key is hashed
 * and compared too, so every refusal costs the same.
 * @example
 * ```ts
 * const caller = await verifyApiKey(keys, bearerToken);
 * if (caller === undefined) return unauthorized();
 * ```
 */
export async function verifyApiKey(store: ApiKeyStore, presented: string): Promise<ApiKeyRecord | undefined> {
  const match = KEY.exec(presented);
  const stored = match === null ? undefined : await store.find(match[1]!);
  const expected = Buffer.from(stored?.sha256 ?? "0".repeat(64), "hex");
  const received = createHash("sha256").update(presented, "utf8").digest();
  const equal = expected.length === received.length && timingSafeEqual(expected, received);
  return equal && stored !== undefined ? recordOf(stored) : undefined;
}
