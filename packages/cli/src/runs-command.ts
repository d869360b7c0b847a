import { extname, resolve } from "node:path";
import { entryClassFor, type Entries } from "@rein/server";
import { Context, isRunLeaseStore, type Agent, type RunRecord, type RunState } from "rein";
import type { CliIo } from "./cli-io";
import { CliUsageError, ExitCode } from "./exit-codes";
import { entriesOf, isTypeScript, loadModule, tsxHook } from "./load-module";
import { reachFromFlags } from "./reach-from-flags";
import { oneLine, openStore, shown, time, withStore } from "./store-access";

const STATES: readonly RunState[] = ["running", "interrupted", "paused", "cancelled", "error", "completed"];

/** Why a run stopped, from its record's reason (JSON text with a `message`), as one line. */
function reasonOf(record: RunRecord): string {
  if (record.reason === null) return "";
  try {
    const parsed = JSON.parse(record.reason) as { message?: unknown };
    return oneLine(typeof parsed.message === "string" ? parsed.message : record.reason, 70);
  } catch {
    return oneLine(record.reason, 70);
  }
}

/**
 * `rein runs ls`: the resumable runs of a store, oldest first, one line
 * each (id, method, state, session, last sign of life, why it stopped);
 * `--state` narrows them (comma-separated).
 * @example
 * ```ts
 * listRuns(processIo(), { store: ".rein/sessions.db", state: "interrupted,paused" });
 * ```
 */
export function listRuns(io: CliIo, options: { store?: string; state?: string }): void {
  const states = options.state === undefined ? undefined : options.state.split(",").filter((item) => item !== "");
  const unknown = states?.find((item) => !STATES.includes(item as RunState));
  if (unknown !== undefined) throw new CliUsageError(`--state takes ${STATES.join(", ")} (comma-separated), got '${unknown}'`);
  withStore(io, options.store, (store) => {
    const runs = store.listRuns(states as RunState[] | undefined);
    if (runs.length === 0) {
      io.stdout("No runs.\n");
      return;
    }
    io.stdout(`${"RUN".padEnd(26)} ${"METHOD".padEnd(24)} ${"STATE".padEnd(11)} ${"SESSION".padEnd(20)} UPDATED              WHY\n`);
    for (const run of runs) {
      io.stdout(`${shown(run.runId).padEnd(26)} ${shown(run.name).padEnd(24)} ${run.state.padEnd(11)} ${oneLine(run.sessionId, 20).padEnd(20)} ${time(run.updatedAt)}  ${shown(reasonOf(run))}\n`);
    }
  });
}

/** Options of `rein runs resume`. */
export interface ResumeCommandOptions {
  /** The session store file. @default ".rein/sessions.db" */
  readonly store?: string;
  /** Overrides the method's code-change policy for this resume. */
  readonly codeChangePolicy?: string;
  /** The local maximum logic depth. */
  readonly maxReach?: number;
  /** The `config/reach.yaml` environment section. */
  readonly env?: string;
}

/**
 * `rein runs resume <module> <runId>`: finishes a paused, cancelled, failed
 * or interrupted run on its original node, in this process, with an agent
 * of the run's class from the module's `entries`; finished steps return
 * their saved results. Prints the method's result (exit 0); a run that must
 * stay paused, or that cannot be taken, is a one-line error (exit 1).
 * @example
 * ```ts
 * const code = await resumeCommand(processIo(), "jobs.ts", "Y4vFGfFJzIjyPsQhXLcYkw-1", { codeChangePolicy: "use_latest" });
 * ```
 */
export async function resumeCommand(io: CliIo, module: string, runId: string, options: ResumeCommandOptions = {}): Promise<number> {
  const policy = options.codeChangePolicy;
  if (policy !== undefined && policy !== "keep_original" && policy !== "use_latest") {
    throw new CliUsageError(`--code-change-policy takes keep_original or use_latest, got '${policy}'`);
  }
  const modulePath = resolve(io.cwd, module);
  if (isTypeScript(modulePath) && extname(__filename) !== ".ts") require(tsxHook(modulePath));
  const entries = entriesOf(await loadModule(modulePath), module);
  const store = openStore(io, options.store);
  try {
    const record = isRunLeaseStore(store) ? store.getRun(runId) : undefined;
    if (record === undefined) throw new CliUsageError(`no run '${runId}' in ${store.location} (rein runs ls lists them)`);
    const agentClass = entryClassFor(entries as Entries, record.name) as (new (options: object) => Agent) | undefined;
    if (agentClass === undefined) throw new CliUsageError(`${module} lists no entry of the class of ${record.name}`);
    const agent = new agentClass({ context: Context.forSession(store, record.sessionId), reach: reachFromFlags(options) });
    const result = await agent.resumeRun(runId, policy === undefined ? {} : { codeChangePolicy: policy });
    io.stdout(`${typeof result === "string" ? result : JSON.stringify(result, null, 2)}\n`);
    return ExitCode.Ok;
  } finally {
    store.close();
  }
}
