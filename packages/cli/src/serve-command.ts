import { mkdirSync } from "node:fs";
import { dirname, extname, resolve } from "node:path";
import { checkEntryProviders, createServer, PgBossQueue, serve, SqliteApiKeyStore, startBackgroundWorker, type ApiKeyStore, type Entries } from "@rein/server";
import { SessionStore, type SessionStoreLike } from "rein";
import type { CliIo } from "./cli-io";
import { CliUsageError, ExitCode } from "./exit-codes";
import { entriesOf, isTypeScript, loadModule, tsxHook } from "./load-module";
import { reachFromFlags } from "./reach-from-flags";
import { DEFAULT_STORE_PATH } from "./default-paths";
import { isPostgresUrl, openPostgresKeys, openPostgresStore } from "./postgres-store";

/** Options of `rein serve`. */
export interface ServeCommandOptions {
  /** @default 8080 */
  readonly port?: number;
  /** @default "127.0.0.1" */
  readonly host?: string;
  /**
   * The session store every run is recorded in: a SQLite file, or a
   * `postgres://` URL (with `@rein/store-postgres` installed), whose
   * database then also holds the queue of background runs
   * (`Prefer: respond-async`). @default ".rein/sessions.db"
   */
  readonly store?: string;
  /**
   * With a `postgres://` store: `false` (`--no-worker`) only queues
   * background runs, for `rein worker` processes to execute; otherwise this
   * server executes them too. @default true
   */
  readonly worker?: boolean;
  /** Background runs this server executes at once (`--concurrency`). @default 1 */
  readonly concurrency?: number;
  /** The schema of the queue's tables, as the workers name it. @default "rein_queue" */
  readonly queueSchema?: string;
  /** The local policy's maximum logic depth: every received budget is clamped to it. */
  readonly maxReach?: number;
  /** The `config/reach.yaml` environment section. */
  readonly env?: string;
  /** Give requests without `X-Agent-Policy` a root budget instead of a 400 (clients that are people, not agents). */
  readonly mintRootBudget?: boolean;
  /** Serve the Inspector page at `/inspector` (`--inspector`). @default false */
  readonly inspector?: boolean;
  /** How long shutdown lets runs in flight finish. @default 10_000 */
  readonly graceMs?: number;
  /**
   * `true` (`--auth`): every route but `/healthz` needs an API key of the
   * store (`rein keys create`). `false` (`--no-auth`): open, on any host.
   * Unset: open on a loopback host (said at start), refused on any other.
   */
  readonly auth?: boolean;
  /** How long a client has to send its headers. @default 10_000 */
  readonly headersTimeoutMs?: number;
  /** How long a client has after that to send its body. @default 30_000 */
  readonly bodyTimeoutMs?: number;
  /** How long a kept-alive connection may sit idle. @default 5_000 */
  readonly idleTimeoutMs?: number;
  /** The most connections open at once. @default 1_024 */
  readonly maxConnections?: number;
  /** Resolves when the server should stop: with the exit code to return. @default SIGINT (130) or SIGTERM (0) */
  readonly until?: Promise<number>;
}

/** @internal Resolves on SIGINT (130) or SIGTERM (0), whichever comes first (`rein serve`, `rein worker`). */
export function stopSignal(): Promise<number> {
  return new Promise((stop) => {
    const onInt = (): void => finish(ExitCode.Interrupted);
    const onTerm = (): void => finish(ExitCode.Ok);
    const finish = (code: number): void => {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
      stop(code);
    };
    process.once("SIGINT", onInt);
    process.once("SIGTERM", onTerm);
  });
}

/**
 * `rein serve <module>`: serves the module's `entries` over HTTP
 * (`@rein/server`), recording into a session store file, until SIGINT or
 * SIGTERM; then it shuts down gracefully (runs in flight get the grace
 * period, the rest are cancelled and their nodes marked `interrupted`) and
 * resolves to the exit code (130 after Ctrl-C, 0 after SIGTERM).
 * @example
 * ```ts
 * const code = await serveCommand(processIo(), "examples/cli-chain.ts", { port: 8080 });
 * ```
 */
export async function serveCommand(io: CliIo, module: string, options: ServeCommandOptions = {}): Promise<number> {
  const modulePath = resolve(io.cwd, module);
  // Compiled, a TypeScript module needs tsx's hook; from source (this repo's tests) a loader is already in place.
  if (isTypeScript(modulePath) && extname(__filename) !== ".ts") require(tsxHook(modulePath));
  const host = options.host ?? "127.0.0.1";
  if (options.auth === undefined && !isLoopback(host)) {
    throw new CliUsageError(`refusing to serve on ${host} without authentication: pass --auth (API keys from \`rein keys create\`), or --no-auth to serve it open to anyone who can reach it`);
  }
  const entries = entriesOf(await loadModule(modulePath), module) as Entries;
  // Refused now rather than answering every run with the error: no model provider, or one missing its key.
  checkEntryProviders(entries);
  const opened = openServedStore(io, options);
  const { store, storePath, queue } = opened;
  // With a queue, the built-in workers need the keys too (auth or not here): a capped key's background run is held to its caps.
  const keys = options.auth === true || (queue !== undefined && options.worker !== false) ? opened.keys() : undefined;
  const auth = options.auth === true && keys !== undefined ? { auth: { keys } } : {};
  try {
    const reach = reachFromFlags(options);
    const app = createServer({ entries, store, reach, mintRootBudget: options.mintRootBudget === true, inspector: options.inspector === true, ...auth, ...(queue === undefined ? {} : { queue }) });
    const server = await serve({
      app,
      port: options.port ?? 8080,
      hostname: host,
      graceMs: options.graceMs,
      headersTimeoutMs: options.headersTimeoutMs,
      bodyTimeoutMs: options.bodyTimeoutMs,
      idleTimeoutMs: options.idleTimeoutMs,
      maxConnections: options.maxConnections,
      // On a shared database the queue continues a dead worker's runs (resumable ones on their lease): a second
      // continuation here would race it, so an interrupted run waits for its job's retry or POST /v1/runs/:id/resume.
      ...(queue === undefined ? {} : { resumeInterrupted: false }),
      // The server's start-up warnings are lines of this command's own output.
      warn: (message) => io.stdout(`rein serve: warning: ${message}\n`),
    });
    // Listening: from now on SIGINT/SIGTERM stop it (a failed listen leaves no handler behind).
    const until = options.until ?? stopSignal();
    io.stdout(`rein serve: ${Object.keys(entries).join(", ")} on ${server.url} (sessions in ${storePath}); Ctrl-C stops it\n`);
    if (options.auth === true && keys !== undefined) {
      const count = (await keys.list()).length;
      io.stdout(`rein serve: API keys required (${count} in ${storePath}${count === 0 ? ": every request is 401 until `rein keys create` adds one" : ""})\n`);
    } else if (isLoopback(host)) io.stdout("rein serve: open: no authentication (loopback only; --auth requires API keys)\n");
    else io.stdout(`rein serve: open to anyone who can reach ${host}: no authentication (--no-auth)\n`);
    if (options.inspector === true) io.stdout(`rein serve: inspector at ${server.url}/inspector\n`);
    const worker = queue === undefined || options.worker === false ? undefined : await startBackgroundWorker({ entries, store, queue, reach, concurrency: options.concurrency ?? 1, ...(keys === undefined ? {} : { keys }) });
    if (queue !== undefined) {
      io.stdout(worker === undefined ? "rein serve: background runs queued for rein worker processes (--no-worker)\n" : `rein serve: executing background runs, ${options.concurrency ?? 1} at a time\n`);
    }
    void server.resumed.then((report) => io.stdout(`${resumeReport(report)}\n`));
    const code = await until;
    io.stdout("rein serve: stopping (runs in flight get the grace period)\n");
    await server.close();
    await worker?.stop();
    io.stdout("rein serve: stopped\n");
    return code;
  } finally {
    await keys?.close();
    await queue?.stop();
    store.close();
  }
}

/** The served store (a SQLite file, or Postgres with its queue), and where API keys are kept. */
function openServedStore(io: CliIo, options: ServeCommandOptions): { store: SessionStoreLike & { close(): void }; storePath: string; queue?: PgBossQueue; keys: () => ApiKeyStore } {
  const location = options.store ?? DEFAULT_STORE_PATH;
  if (isPostgresUrl(location)) {
    // Commits and lease renewals on a pool: a slow or stalled database never holds /healthz or other requests.
    const store = openPostgresStore(location, { asyncWrites: true });
    const queue = new PgBossQueue({ connectionString: location, ...(options.queueSchema === undefined ? {} : { schema: options.queueSchema }) });
    // The URL is not printed: it holds the password. Keys (with their spend caps and spend) live in the same database.
    return { store, storePath: "a Postgres database", queue, keys: () => openPostgresKeys(location) };
  }
  const storePath = resolve(io.cwd, location);
  mkdirSync(dirname(storePath), { recursive: true });
  // The server's own shutdown settles the store, after the grace period: no store-level signal handler.
  const store = new SessionStore({ path: storePath, shutdownFlush: false });
  return { store, storePath, keys: () => new SqliteApiKeyStore({ path: storePath }) };
}

/** Whether `host` is a loopback address: only this machine can connect. */
export function isLoopback(host: string): boolean {
  return /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/i.test(host);
}

/** One line on what the server continued when it started, and what it left for `POST /v1/runs/:id/resume`. */
function resumeReport(report: { resumed: readonly { runId: string; status: string }[]; leftAlone: readonly { runId: string; reason: string }[]; error?: Error }): string {
  if (report.error !== undefined) return `rein serve: could not look for interrupted runs: ${report.error.message}`;
  const resumed = report.resumed.map((run) => `${run.runId} (${run.status})`).join(", ");
  const left = report.leftAlone.map((run) => `${run.runId} (${run.reason})`).join(", ");
  return `rein serve: resumed ${report.resumed.length} interrupted run(s)${resumed ? `: ${resumed}` : ""}; left ${report.leftAlone.length} for POST /v1/runs/:id/resume${left ? `: ${left}` : ""}`;
}
