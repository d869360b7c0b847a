import { extname, resolve } from "node:path";
import { checkEntryProviders, PgBossQueue, startBackgroundWorker, type Entries } from "@rein/server";
import type { CliIo } from "./cli-io";
import { CliUsageError } from "./exit-codes";
import { entriesOf, isTypeScript, loadModule, tsxHook } from "./load-module";
import { reachFromFlags } from "./reach-from-flags";
import { stopSignal } from "./serve-command";
import { isPostgresUrl, openPostgresKeys, openPostgresStore } from "./postgres-store";

/** Options of `rein worker`. */
export interface WorkerCommandOptions {
  /** The `postgres://` URL of the session store, whose database also holds the queue (required). */
  readonly store?: string;
  /** Runs executed at once by this process. @default 1 */
  readonly concurrency?: number;
  /** The schema of pg-boss's tables (the servers' `PgBossQueue` must use the same). @default "rein_queue" */
  readonly queueSchema?: string;
  /** The local policy's maximum logic depth: each job's budget is clamped to it again. */
  readonly maxReach?: number;
  /** The `config/reach.yaml` environment section. */
  readonly env?: string;
  /** Resolves when the worker should stop: with the exit code to return. @default SIGINT (130) or SIGTERM (0) */
  readonly until?: Promise<number>;
}

/**
 * `rein worker <module> --store <postgres url> [--concurrency N]`: executes
 * the background runs (`POST /v1/agent/run` with `Prefer: respond-async`)
 * that servers put on the pg-boss queue of that database, with the module's
 * `entries`, recording into its session store, until SIGINT or SIGTERM. A
 * run still executing when the worker stops (or is killed) is retried by
 * pg-boss once its job expires, by any worker (docs/background-runs.md).
 * @example
 * ```ts
 * const code = await workerCommand(processIo(), "jobs.ts", { store: "postgres://rein@db/rein", concurrency: 4 });
 * ```
 */
export async function workerCommand(io: CliIo, module: string, options: WorkerCommandOptions = {}): Promise<number> {
  const url = options.store;
  if (url === undefined || !isPostgresUrl(url)) {
    throw new CliUsageError("rein worker needs --store <postgres://…>: the database whose session store and job queue the servers use");
  }
  const modulePath = resolve(io.cwd, module);
  // Compiled, a TypeScript module needs tsx's hook; from source (this repo's tests) a loader is already in place.
  if (isTypeScript(modulePath) && extname(__filename) !== ".ts") require(tsxHook(modulePath));
  const entries = entriesOf(await loadModule(modulePath), module) as Entries;
  checkEntryProviders(entries);
  // Commits and lease renewals on a pool: a slow or stalled database never holds the worker's event loop.
  const store = openPostgresStore(url, { asyncWrites: true });
  const queue = new PgBossQueue({ connectionString: url, ...(options.queueSchema === undefined ? {} : { schema: options.queueSchema }) });
  // The servers' API keys, in the same database: a capped key's run is held to its caps here too.
  const keys = openPostgresKeys(url);
  try {
    const concurrency = options.concurrency ?? 1;
    const worker = await startBackgroundWorker({ entries, store, queue, keys, reach: reachFromFlags(options), concurrency });
    const until = options.until ?? stopSignal();
    // The URL is not printed: it holds the password.
    io.stdout(`rein worker: ${Object.keys(entries).join(", ")}, ${concurrency} at a time (pid ${process.pid}); Ctrl-C stops it\n`);
    const code = await until;
    io.stdout("rein worker: stopping (runs still executing are retried by the queue)\n");
    await worker.stop();
    io.stdout("rein worker: stopped\n");
    return code;
  } finally {
    await queue.stop();
    await keys.close();
    store.close();
  }
}
