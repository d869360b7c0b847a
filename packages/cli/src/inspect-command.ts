import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { createInspector, serve } from "@rein/server";
import { SessionStore, type SessionStoreLike } from "rein";
import type { CliIo } from "./cli-io";
import { CliUsageError } from "./exit-codes";
import { DEFAULT_STORE_PATH } from "./default-paths";
import { stopSignal } from "./serve-command";
import { isPostgresUrl, openPostgresStore } from "./postgres-store";

/** Options of `rein inspect`. */
export interface InspectCommandOptions {
  /** @default 4000 (0: any free port) */
  readonly port?: number;
  /** @default "127.0.0.1" */
  readonly host?: string;
  /** Resolves when the page should stop being served, with the exit code. @default SIGINT (130) or SIGTERM (0) */
  readonly until?: Promise<number>;
  /** Called with the page's URL once it is served (tests). */
  readonly onListening?: (url: string) => void;
}

/**
 * `rein inspect <store>`: serves the read-only Inspector page over a
 * session store written by any process — a SQLite file or a `postgres://`
 * URL (with `@rein/store-postgres` installed) — on loopback, prints its
 * URL, and stops on Ctrl-C or SIGTERM. Nothing runs here: the page has no
 * Stop, Approve or Resume.
 * @example
 * ```ts
 * const code = await inspectCommand(processIo(), ".rein/sessions.db", { port: 4000 });
 * ```
 */
export async function inspectCommand(io: CliIo, storeArgument: string | undefined, options: InspectCommandOptions = {}): Promise<number> {
  const host = options.host ?? "127.0.0.1";
  const store = openInspectedStore(io, storeArgument ?? DEFAULT_STORE_PATH);
  try {
    const app = createInspector({ store, onInternalError: (error) => io.stderr(`rein inspect: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}\n`) });
    // Nothing of the store is resumed or run: the page only reads.
    const server = await serve({ app, port: options.port ?? 4000, hostname: host, resumeInterrupted: false, warn: () => undefined });
    const until = options.until ?? stopSignal();
    const url = `${server.url}/inspector`;
    io.stdout(`rein inspect: ${url} (read-only, ${store.location}); Ctrl-C stops it\n`);
    options.onListening?.(url);
    const code = await until;
    await server.close();
    return code;
  } finally {
    (store as { close?: () => unknown }).close?.();
  }
}

function openInspectedStore(io: CliIo, location: string): SessionStoreLike {
  // postgres-store.ts is the one place a postgres:// store is opened (loaded only then; missing, a usage error).
  if (isPostgresUrl(location)) return openPostgresStore(location);
  const path = resolve(io.cwd, location);
  // Opening a missing file would create an empty store: say where it was looked for instead.
  if (!existsSync(path)) throw new CliUsageError(`no session store at ${path} (pass a SQLite file written by rein run / rein serve, or a postgres:// URL)`);
  return new SessionStore({ path, shutdownFlush: false });
}
