import { existsSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { API_KEY_SCOPES, SqliteApiKeyStore, type ApiKeyScope, type ApiKeyStore } from "@rein/server";
import type { SpendCaps } from "rein";
import type { CliIo } from "./cli-io";
import { CliUsageError } from "./exit-codes";
import { DEFAULT_STORE_PATH } from "./default-paths";
import { isPostgresUrl, openPostgresKeys } from "./postgres-store";
import { time } from "./store-access";

/**
 * Options of `rein keys create`.
 * @example
 * ```ts
 * await createKey(processIo(), { name: "ci", scopes: "run,read" });
 * ```
 */
export interface CreateKeyOptions {
  /** The key's unique name (1-64 of A-Z a-z 0-9 . _ -). */
  readonly name: string;
  /** Comma-separated scopes: run, read, mint, admin. */
  readonly scopes: string;
  /** The session store the key is kept in (beside the sessions `rein serve --auth` serves): a SQLite file or a `postgres://` URL. @default ".rein/sessions.db" */
  readonly store?: string;
  /** `--max-tokens`: input and output tokens the key's runs may use per period. */
  readonly maxTokens?: string;
  /** `--max-cost-usd`: US dollars the key's runs may cost per period (needs a runtime `pricing`). */
  readonly maxCostUsd?: string;
  /** `--max-concurrent-runs`: runs of the key in flight at once. */
  readonly maxConcurrentRuns?: string;
  /** `--max-requests-per-minute`: runs the key may start per UTC minute. */
  readonly maxRequestsPerMinute?: string;
  /** `--cap-period`: the window tokens and cost count in, e.g. `1d`, `12h`, `30m`. @default "1d" */
  readonly capPeriod?: string;
}

const PERIOD = /^(\d+)(s|m|h|d)$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** The spend caps of `rein keys create`'s flags; each malformed one is a usage error naming the flag. */
export function capsOfFlags(options: CreateKeyOptions): SpendCaps | undefined {
  const caps: { -readonly [K in keyof SpendCaps]: SpendCaps[K] } = {};
  const whole = (flag: string, text: string | undefined, least: number): number | undefined => {
    if (text === undefined) return undefined;
    const value = Number(text);
    // Only parsed here: the key store names each cap's upper bound (see createKey).
    if (!/^\d+$/.test(text) || value < least) throw new CliUsageError(`${flag} must be a whole number of at least ${least}, got '${text.slice(0, 40)}'`);
    return value;
  };
  const tokens = whole("--max-tokens", options.maxTokens, 0);
  if (tokens !== undefined) caps.tokens = tokens;
  if (options.maxCostUsd !== undefined) {
    const cost = Number(options.maxCostUsd);
    if (!/^\d+(\.\d+)?$/.test(options.maxCostUsd) || !Number.isFinite(cost)) throw new CliUsageError(`--max-cost-usd must be an amount in US dollars such as 5 or 0.25, got '${options.maxCostUsd.slice(0, 40)}'`);
    caps.costUsd = cost;
  }
  const runs = whole("--max-concurrent-runs", options.maxConcurrentRuns, 1);
  if (runs !== undefined) caps.concurrentRuns = runs;
  const perMinute = whole("--max-requests-per-minute", options.maxRequestsPerMinute, 1);
  if (perMinute !== undefined) caps.requestsPerMinute = perMinute;
  if (options.capPeriod !== undefined) {
    const match = PERIOD.exec(options.capPeriod);
    const ms = match === null ? 0 : Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
    if (ms < 1_000) throw new CliUsageError(`--cap-period must be a duration such as 1d, 12h, 30m or 90s (at least 1s), got '${options.capPeriod.slice(0, 40)}'`);
    if (caps.tokens === undefined && caps.costUsd === undefined) throw new CliUsageError("--cap-period is the window of --max-tokens and --max-cost-usd: give one of them too");
    caps.periodMs = ms;
  }
  return Object.keys(caps).length === 0 ? undefined : caps;
}

/** The flag of each cap, for the key store's messages about them. */
const CAP_FLAGS: Readonly<Record<string, string>> = {
  tokens: "--max-tokens",
  costUsd: "--max-cost-usd",
  concurrentRuns: "--max-concurrent-runs",
  requestsPerMinute: "--max-requests-per-minute",
  periodMs: "--cap-period",
};

/** A key store's refusal of `create` as the user typed it: without the store's name, a cap named by its flag. */
function usageOf(message: string): string {
  return message.replace(/^\w+ApiKeyStore\.create: /, "").replace(/^caps\.(\w+)/, (field, name: string) => CAP_FLAGS[name] ?? field);
}

/** One line of what `caps` allow, e.g. `2000000 tokens/1d, $5/1d, 4 at once, 60/min`; "-" without caps. */
export function describeCaps(caps: SpendCaps | undefined): string {
  if (caps === undefined) return "-";
  const period = formatPeriod(caps.periodMs ?? UNIT_MS.d);
  const parts: string[] = [];
  if (caps.tokens !== undefined) parts.push(`${caps.tokens} tokens/${period}`);
  if (caps.costUsd !== undefined) parts.push(`$${caps.costUsd}/${period}`);
  if (caps.concurrentRuns !== undefined) parts.push(`${caps.concurrentRuns} at once`);
  if (caps.requestsPerMinute !== undefined) parts.push(`${caps.requestsPerMinute}/min`);
  return parts.join(", ");
}

function formatPeriod(ms: number): string {
  for (const unit of ["d", "h", "m"] as const) if (ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  return `${ms / 1000}s`;
}

/** Parses `--scopes run,read`: a usage error names the scopes that exist. */
function scopesOf(text: string): ApiKeyScope[] {
  const scopes = text.split(",").map((scope) => scope.trim()).filter((scope) => scope !== "");
  const unknown = scopes.find((scope) => !API_KEY_SCOPES.includes(scope as ApiKeyScope));
  if (scopes.length === 0 || unknown !== undefined) {
    throw new CliUsageError(`--scopes must be a comma-separated list of ${API_KEY_SCOPES.join(", ")}${unknown === undefined ? "" : `; '${unknown.slice(0, 40)}' is not one`}`);
  }
  return scopes as ApiKeyScope[];
}

/**
 * Opens the key table of a store: a `postgres://` URL (`@rein/store-postgres`'s
 * PostgresApiKeyStore, loaded only then), or a SQLite file — `create` makes
 * the file when missing, the others refuse to.
 */
function openKeys(io: CliIo, store: string | undefined, create: boolean): { keys: ApiKeyStore; path: string } {
  if (store !== undefined && isPostgresUrl(store)) return { keys: openPostgresKeys(store), path: "the Postgres database" };
  const path = resolve(io.cwd, store ?? DEFAULT_STORE_PATH);
  if (!create && !existsSync(path)) throw new Error(`no session store at ${path} (rein keys create makes one, or pass --store <path>)`);
  if (create) mkdirSync(dirname(path), { recursive: true });
  return { keys: new SqliteApiKeyStore({ path }), path };
}

/**
 * `rein keys create --name ci --scopes run,read`: creates an API key and
 * prints it alone on stdout, once (only its SHA-256 is stored, so it cannot
 * be shown again); what was done goes to stderr, so
 * `KEY=$(rein keys create …)` captures the key and nothing else.
 * @example
 * ```ts
 * await createKey(processIo(), { name: "ci", scopes: "run,read", store: ".rein/sessions.db" });
 * ```
 */
export async function createKey(io: CliIo, options: CreateKeyOptions): Promise<void> {
  const scopes = scopesOf(options.scopes);
  const caps = capsOfFlags(options);
  const { keys, path } = openKeys(io, options.store, true);
  try {
    const { key, record } = await keys.create({ name: options.name, scopes, ...(caps === undefined ? {} : { caps }) }).catch((error: unknown) => {
      throw error instanceof TypeError ? new CliUsageError(usageOf(error.message)) : error;
    });
    io.stdout(`${key}\n`);
    const capped = record.caps === undefined ? "" : `, caps ${describeCaps(record.caps)}`;
    io.stderr(`rein keys: created '${record.name}' (id ${record.id}, scopes ${record.scopes.join(",")}${capped}) in ${path}; the key above is shown once — store it now\n`);
  } finally {
    await keys.close();
  }
}

/**
 * `rein keys ls`: one line per key, oldest first — name, id, scopes,
 * creation time (UTC). Never the key nor its hash.
 * @example
 * ```ts
 * await listKeys(processIo(), { store: ".rein/sessions.db" });
 * ```
 */
export async function listKeys(io: CliIo, options: { store?: string }): Promise<void> {
  const { keys } = openKeys(io, options.store, false);
  try {
    const records = await keys.list();
    if (records.length === 0) {
      io.stdout("No keys.\n");
      return;
    }
    io.stdout(`${"NAME".padEnd(24)} ${"ID".padEnd(16)} ${"SCOPES".padEnd(20)} ${"CREATED".padEnd(19)} CAPS\n`);
    for (const record of records) {
      io.stdout(`${record.name.padEnd(24)} ${record.id.padEnd(16)} ${record.scopes.join(",").padEnd(20)} ${time(record.createdAt)} ${describeCaps(record.caps)}\n`);
    }
  } finally {
    await keys.close();
  }
}

/**
 * `rein keys revoke <name>`: deletes the key; requests with it are 401 from
 * then on (a running server reads keys per request). An unknown name fails.
 * @example
 * ```ts
 * await revokeKey(processIo(), "ci", { store: ".rein/sessions.db" });
 * ```
 */
export async function revokeKey(io: CliIo, name: string, options: { store?: string }): Promise<void> {
  const { keys, path } = openKeys(io, options.store, false);
  try {
    if (!(await keys.revoke(name))) throw new Error(`no key named '${name.slice(0, 64)}' in ${path} (rein keys ls lists them)`);
    io.stdout(`rein keys: revoked '${name}'\n`);
  } finally {
    await keys.close();
  }
}
