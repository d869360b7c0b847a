import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { isRunLeaseStore, SessionStore, type RunLeaseStore, type SessionStoreLike } from "rein";
import type { CliIo } from "./cli-io";
import { DEFAULT_STORE_PATH } from "./default-paths";
import { isPostgresUrl, openPostgresStore } from "./postgres-store";

/** @internal A store `rein sessions` and `rein runs` read: the SQLite file store or a Postgres one. */
export type OpenedStore = SessionStoreLike & RunLeaseStore;

/**
 * @internal Opens an existing store (never creates one): `rein sessions`
 * and `rein runs` — a SQLite file, or a `postgres://` URL.
 */
export function openStore(io: CliIo, path: string | undefined): OpenedStore {
  if (path !== undefined && isPostgresUrl(path)) {
    const store = openPostgresStore(path);
    if (!isRunLeaseStore(store)) throw new Error("this @rein/store-postgres keeps no runs: upgrade it beside @rein/cli");
    return store;
  }
  const location = resolve(io.cwd, path ?? DEFAULT_STORE_PATH);
  // Opening a missing file would create an empty store: say where the store was looked for instead.
  if (!existsSync(location)) {
    throw new Error(`no session store at ${location} (run \`rein run\` first, or pass --store <path>)`);
  }
  return new SessionStore({ path: location, shutdownFlush: false });
}

/** @internal Runs `use` on the opened store and closes it. */
export function withStore<R>(io: CliIo, path: string | undefined, use: (store: OpenedStore) => R): R {
  const store = openStore(io, path);
  try {
    return use(store);
  } finally {
    store.close();
  }
}

/** @internal UTC `YYYY-MM-DD hh:mm:ss`. */
export function time(epochMs: number): string {
  return new Date(epochMs).toISOString().replace("T", " ").slice(0, 19);
}

/**
 * @internal Text from a store (a model's answer, a tool's output, a session
 * id or title a caller chose) as a terminal may show it: control characters
 * are written out (`\x1b`), so a recorded escape sequence cannot clear the
 * screen, retitle the window or set the clipboard of whoever inspects it.
 */
export function shown(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** @internal A value as one line of at most `width` characters (whitespace folded, control characters written out). */
export function oneLine(value: unknown, width = 60): string {
  if (value === undefined || value === null) return "";
  const text = shown((typeof value === "string" ? value : JSON.stringify(value)).replace(/\s+/g, " "));
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

