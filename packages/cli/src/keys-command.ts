import { existsSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { API_KEY_SCOPES, SqliteApiKeyStore, type ApiKeyScope } from "@rein/server";
import type { CliIo } from "./cli-io";
import { CliUsageError } from "./exit-codes";
import { DEFAULT_STORE_PATH } from "./default-paths";
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
  /** The session store file the key is kept in (beside the sessions `rein serve --auth` serves). @default ".rein/sessions.db" */
  readonly store?: string;
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

/** Opens the key table of a store file; `create` makes the file when missing, the others refuse to. */
function openKeys(io: CliIo, store: string | undefined, create: boolean): { keys: SqliteApiKeyStore; path: string } {
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
  const { keys, path } = openKeys(io, options.store, true);
  try {
    const { key, record } = await keys.create({ name: options.name, scopes }).catch((error: unknown) => {
      throw error instanceof TypeError ? new CliUsageError(error.message.replace(/^SqliteApiKeyStore\.create: /, "")) : error;
    });
    io.stdout(`${key}\n`);
    io.stderr(`rein keys: created '${record.name}' (id ${record.id}, scopes ${record.scopes.join(",")}) in ${path}; the key above is shown once — store it now\n`);
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
    io.stdout(`${"NAME".padEnd(24)} ${"ID".padEnd(16)} ${"SCOPES".padEnd(20)} CREATED\n`);
    for (const record of records) io.stdout(`${record.name.padEnd(24)} ${record.id.padEnd(16)} ${record.scopes.join(",").padEnd(20)} ${time(record.createdAt)}\n`);
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
