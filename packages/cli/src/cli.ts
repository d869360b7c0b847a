import { Command, CommanderError, Option } from "commander";
import type { CliIo } from "./cli-io";
import { CliUsageError, ExitCode } from "./exit-codes";
import type { RunCommandOptions } from "./run-command";
import type { ResumeCommandOptions } from "./runs-command";
import type { ServeCommandOptions } from "./serve-command";
import type { WorkerCommandOptions } from "./worker-command";
import { DEFAULT_REACH_LOG_PATH, DEFAULT_STORE_PATH } from "./default-paths";

// Each command's module loads when the command runs: `rein --help` loads neither rein nor the server (start-up).
const runModule = () => require("./run-command") as typeof import("./run-command");
const serveModule = () => require("./serve-command") as typeof import("./serve-command");
const sessionsModule = () => require("./sessions-command") as typeof import("./sessions-command");
const runsModule = () => require("./runs-command") as typeof import("./runs-command");
const keysModule = () => require("./keys-command") as typeof import("./keys-command");
const inspectModule = () => require("./inspect-command") as typeof import("./inspect-command");
const workerModule = () => require("./worker-command") as typeof import("./worker-command");

const EXIT_HELP = `
Exit codes:
  0    ok
  1    the run (or the command) failed; the error is printed in one line
  2    usage error (unknown command or option, missing argument)
  130  interrupted (Ctrl-C); running nodes are recorded as interrupted
  143  rein run stopped by SIGTERM (129: SIGHUP); its run's process was stopped too

Examples:
  $ rein run examples/cli-chain.ts#plan --task "Summarize recursion"
  $ rein sessions ls
  $ rein sessions export <id> --format mermaid
  $ rein serve examples/cli-chain.ts --port 8080 --mint-root-budget
  $ rein runs ls --state interrupted,paused
  $ rein runs resume ./jobs.ts <run id> --code-change-policy use_latest
  $ KEY=$(rein keys create --name ci --scopes run,read)
  $ rein serve examples/cli-chain.ts --host 0.0.0.0 --auth
  $ rein worker ./jobs.ts --store postgres://rein@db/rein --concurrency 4
`;

function integer(flag: string, min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value) => {
    // Decimal digits only, as the spend-cap flags take them: `0x50` and `1e3` are not ports or counts.
    const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isInteger(number) || number < min || number > max) {
      const range = max !== Number.MAX_SAFE_INTEGER ? `an integer from ${min} to ${max}` : min === 1 ? "a positive integer" : `an integer of at least ${min}`;
      throw new CliUsageError(`${flag} must be ${range}, got '${value}'`);
    }
    return number;
  };
}

/**
 * The parser of an id argument (`<id>`, `<runId>`, `<name>`) or option
 * (`--session`, `--store`): an empty one is a usage error naming what to
 * pass and `hint` (where to find one, or what leaving it out does), before
 * any store is opened.
 */
function nonEmpty(argument: string, what: string, hint: string): (value: string) => string {
  return (value) => {
    if (value === "") throw new CliUsageError(`${argument} must be ${what}, got '' (${hint})`);
    return value;
  };
}

/**
 * `--max-reach` of `run`, `serve` and `runs resume`, declared once (its
 * parser and flag); only what the limit means differs per command.
 */
function maxReachOption(description: string): Option {
  return new Option("--max-reach <n>", description).argParser(integer("--max-reach", 1));
}

/** `--env` of `run`, `serve` and `runs resume`, declared once. */
function envOption(): Option {
  return new Option("--env <name>", "the environment section of config/reach.yaml (sets REIN_ENV)");
}

/** `--store` of every command that opens the session store, declared once: a SQLite file or a postgres:// URL. */
function storeOption(description = "the session store: a SQLite file or a postgres:// URL"): Option {
  return new Option("--store <path|url>", description)
    .default(DEFAULT_STORE_PATH)
    .argParser(nonEmpty("--store", "a SQLite file or a postgres:// URL", `leave it out for ${DEFAULT_STORE_PATH}`));
}

/** What `rein run --help` says about the status line, after the options. */
const STATUS_LINE_HELP = `
The status line (redrawn in place on a terminal, one line per change when piped):
  [REACH] Depth 1/5 | Recursion 4/5 WikiAgent.wiki_agent | Loop warnings 0 | Steps 4/100 | Memory 35.2MB/1177.6MB | Zone local | Tokens 1.2k/∞ | 00:03
  Depth          Agent entries nested in the run, against --max-reach (an agent calling itself as a tool stays at 1)
  Recursion      the function nested deepest on the running call chain, against its recursion ceiling (5 by default):
                 what climbs in a runaway
  Loop warnings  tool-loop warnings the model was given (and blocks: calls that did not run)
  Steps          model requests made, against the entry runtime's maxSteps
  Memory         the process's growth since the run started, against maxMemoryMb x (1 + memoryGrowth x depth):
                 the limit grows as agents nest (1024 MB and 0.15 by default: 1177.6MB at depth 1, 1331.2MB at depth 2)
  Zone, Tokens, Cost  the trust zone, and tokens (cost) used against the run's budget
  stalled        no status from the run's process for 5 s (a blocked event loop)
`;

function program(io: CliIo, result: { code: number }): Command {
  const rein = new Command("rein")
    .description("Run agent chains with a live reach status line, serve them over HTTP, inspect and export recorded sessions.")
    .option("--verbose", "print stack traces with errors")
    .showHelpAfterError("(run `rein --help` for usage)")
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .addHelpText("after", EXIT_HELP);

  rein
    .command("run")
    .description("Run <module>#<entry> in a child process, showing its reach status line")
    .argument("<target>", "a module path and an entry name of its `entries` export, e.g. examples/cli-chain.ts#plan")
    // Checked in the action, not by requiredOption: commander checks required options before unknown ones,
    // so `--taks` would be reported as a missing --task instead of an unknown option.
    .option("--task <text>", "the task given to the entry (required)")
    .addOption(maxReachOption("the maximum logic depth (agent entries) of the run"))
    .addOption(envOption())
    .addOption(storeOption())
    .option("--session <id>", "the session to record into (default: a new one)", nonEmpty("--session", "a session id", "leave it out to record into a new session"))
    .addOption(new Option("--stall-ms <ms>", "no status update for this long shows `stalled`").default(5000).argParser(Number).hideHelp())
    .option("--verbose", "print stack traces with errors, name the session at the end, and write the reach status log")
    .option("--reach-log <path>", "where --verbose writes the reach status log (JSON lines)", DEFAULT_REACH_LOG_PATH)
    .addHelpText("after", STATUS_LINE_HELP)
    .action(async (target: string, options: Record<string, unknown>, command: Command) => {
      if (options["task"] === undefined) command.error("error: required option '--task <text>' not specified", { code: "commander.missingMandatoryOptionValue" });
      const verbose = command.optsWithGlobals()["verbose"] === true;
      result.code = await runModule().runCommand(io, target, { ...options, verbose } as RunCommandOptions);
    });

  rein
    .command("serve")
    .description("Serve the `entries` of <module> over HTTP until Ctrl-C or SIGTERM (then shut down gracefully)")
    .argument("<module>", "a module that exports `entries`, e.g. examples/cli-chain.ts")
    .option("--port <n>", "the port to listen on (0: any free port)", integer("--port", 0, 65535), 8080)
    .option("--host <address>", "the address to listen on", "127.0.0.1")
    .addOption(storeOption("the session store: a SQLite file, or a postgres:// URL (its database also holds the queue of background runs)"))
    .option("--no-worker", "with a postgres:// store: only queue background runs (Prefer: respond-async) for rein worker processes")
    .option("--concurrency <n>", "background runs this server executes at once (postgres:// store)", integer("--concurrency", 1, 1_000), 1)
    .option("--queue-schema <name>", "the schema of the queue's tables (as rein worker names it)", "rein_queue")
    .addOption(maxReachOption("the local maximum logic depth; received budgets are clamped to it"))
    .addOption(envOption())
    .option("--mint-root-budget", "give requests without X-Agent-Policy a root budget instead of a 400")
    .option("--inspector", "serve the Inspector page at /inspector: runs live, their graphs and reach, Stop, Approve/Deny, Resume")
    .option("--grace-ms <ms>", "how long shutdown lets runs in flight finish", integer("--grace-ms", 0), 10_000)
    .option("--auth", "require an API key of the store (rein keys create) on every route but /healthz")
    .option("--no-auth", "serve without authentication on a non-loopback --host (loopback is open unless --auth)")
    .option("--headers-timeout-ms <ms>", "how long a client has to send its headers (then 408, closed)", integer("--headers-timeout-ms", 1), 10_000)
    .option("--body-timeout-ms <ms>", "how long a client has after that to send its body (then 408, closed)", integer("--body-timeout-ms", 1), 30_000)
    .option("--idle-timeout-ms <ms>", "how long a kept-alive connection may sit idle", integer("--idle-timeout-ms", 1), 5_000)
    .option("--max-connections <n>", "the most connections open at once", integer("--max-connections", 1), 1_024)
    .action(async (module: string, options: ServeCommandOptions) => {
      if (options.env !== undefined) process.env["REIN_ENV"] = options.env;
      result.code = await serveModule().serveCommand(io, module, options);
    });

  rein
    .command("worker")
    .description("Execute the background runs (Prefer: respond-async) that servers queue in a Postgres database, until Ctrl-C or SIGTERM")
    .argument("<module>", "a module that exports `entries`, e.g. examples/cli-chain.ts")
    .option("--store <url>", "the postgres:// URL of the session store; its database holds the job queue (required)")
    .option("--concurrency <n>", "runs executed at once by this process", integer("--concurrency", 1, 1_000), 1)
    .option("--queue-schema <name>", "the schema of the queue's tables (the servers' PgBossQueue schema)", "rein_queue")
    .addOption(maxReachOption("the local maximum logic depth; each job's budget is clamped to it"))
    .addOption(envOption())
    .action(async (module: string, options: WorkerCommandOptions) => {
      if (options.env !== undefined) process.env["REIN_ENV"] = options.env;
      result.code = await workerModule().workerCommand(io, module, options);
    });

  const sessions = rein.command("sessions").description("Inspect and export recorded sessions");
  sessions
    .command("ls")
    .description("List the sessions of a store")
    .addOption(storeOption())
    .action((options: { store?: string }) => sessionsModule().listSessions(io, options));
  sessions
    .command("show")
    .description("Show a session and its nodes")
    .argument("<id>", "the session id", nonEmpty("<id>", "a session id", "rein sessions ls lists them"))
    .addOption(storeOption())
    .action((id: string, options: { store?: string }) => sessionsModule().showSession(io, id, options));
  sessions
    .command("export")
    .description("Print a session graph as Mermaid, Graphviz dot or JSON")
    .argument("<id>", "the session id", nonEmpty("<id>", "a session id", "rein sessions ls lists them"))
    .addOption(new Option("--format <format>", "the output format").choices(["mermaid", "dot", "json"]).default("mermaid"))
    .addOption(storeOption())
    .action((id: string, options: { store?: string; format?: string }) => sessionsModule().exportSession(io, id, options));

  const keys = rein.command("keys").description("Create, list and revoke the API keys `rein serve --auth` accepts (only their hashes are stored)");
  keys
    .command("create")
    .description("Create a key and print it, once, alone on stdout")
    .requiredOption("--name <name>", "a unique name for the key, e.g. ci")
    .requiredOption("--scopes <scopes>", "comma-separated: run, read, mint, admin")
    .addOption(storeOption("the session store the key is kept in: a SQLite file or a postgres:// URL"))
    .option("--max-tokens <n>", "spend cap: input + output tokens of the key's runs per period")
    .option("--max-cost-usd <usd>", "spend cap: US dollars of the key's runs per period (priced with the runtime's pricing)")
    .option("--max-concurrent-runs <n>", "spend cap: runs of the key in flight at once")
    .option("--max-requests-per-minute <n>", "spend cap: runs the key may start per minute")
    .option("--cap-period <duration>", "the period of --max-tokens and --max-cost-usd: 1d, 12h, 30m, 90s (default 1d)")
    .action((options: import("./keys-command").CreateKeyOptions) => keysModule().createKey(io, options));
  keys
    .command("ls")
    .description("List the keys: name, id, scopes, created, spend caps")
    .addOption(storeOption())
    .action((options: { store?: string }) => keysModule().listKeys(io, options));
  keys
    .command("revoke")
    .description("Delete a key: requests with it are 401 from then on")
    .argument("<name>", "the key's name", nonEmpty("<name>", "a key name", "rein keys ls lists them"))
    .addOption(storeOption())
    .action((name: string, options: { store?: string }) => keysModule().revokeKey(io, name, options));

  rein
    .command("inspect")
    .description("Serve the read-only Inspector page over a session store (a SQLite file or a postgres:// URL) on loopback and print its URL")
    .argument("[store]", "the session store", nonEmpty("[store]", "a SQLite file or a postgres:// URL", `leave it out for ${DEFAULT_STORE_PATH}`), DEFAULT_STORE_PATH)
    .option("--port <n>", "the port to listen on (0: any free port)", integer("--port", 0, 65535), 4000)
    .action(async (store: string, options: { port: number }) => {
      result.code = await inspectModule().inspectCommand(io, store, options);
    });

  const runs = rein.command("runs").description("List and resume resumable runs (methods with methodOptions.resumable)");
  runs
    .command("ls")
    .description("List the resumable runs of a store, oldest first")
    .addOption(storeOption())
    .option("--state <states>", "only runs in these states (comma-separated: running, interrupted, paused, cancelled, error, completed)")
    .action((options: { store?: string; state?: string }) => runsModule().listRuns(io, options));
  runs
    .command("resume")
    .description("Finish a run on its original node in this process; finished steps return their saved results")
    .argument("<module>", "the module whose `entries` list the run's agent class")
    .argument("<runId>", "the run's id (rein runs ls)", nonEmpty("<runId>", "a run id", "rein runs ls lists them"))
    .addOption(storeOption())
    .option("--code-change-policy <policy>", "keep_original or use_latest, over the method's own")
    .addOption(maxReachOption("the maximum logic depth of the resumed run"))
    .addOption(envOption())
    .action(async (module: string, runId: string, options: ResumeCommandOptions) => {
      if (options.env !== undefined) process.env["REIN_ENV"] = options.env;
      result.code = await runsModule().resumeCommand(io, module, runId, options);
    });
  return rein;
}

/**
 * Runs the `rein` command with `argv` (without node and the script) and
 * resolves to its exit code: 0 ok, 1 failed, 2 usage error, 130
 * interrupted. Errors are printed to `io.stderr` in one line (with the
 * stack when `--verbose` is given); nothing is thrown.
 * @example
 * ```ts
 * const code = await main(["sessions", "ls", "--store", "runs.db"], processIo());
 * ```
 */
/**
 * A configuration mistake (no model provider, a missing key) is the user's
 * to fix, like a bad flag: `ProviderConfigError`'s `Symbol.for` marker
 * (checked without loading `rein`, which `rein --help` does not need).
 */
function isProviderConfigError(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[Symbol.for("rein.error.ProviderConfigError")] === true;
}

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const result = { code: ExitCode.Ok as number };
  const verbose = argv.includes("--verbose");
  try {
    await program(io, result).parseAsync([...argv], { from: "user" });
    return result.code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version end with code 0; commander has already printed its own one-line message otherwise.
      if (error.exitCode === 0) return ExitCode.Ok;
      const id = error.code === "commander.unknownOption" ? /unknown option '(-[A-Za-z0-9_][A-Za-z0-9_-]{15,})'/.exec(error.message)?.[1] : undefined;
      // Ids no longer begin with '-', but one recorded by an earlier version may.
      if (id !== undefined) io.stderr(`rein: '${id}' looks like an id: an argument that begins with '-' goes after --, options first (rein runs resume --store <path> <module> -- ${id})\n`);
      return ExitCode.UsageError;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr(`rein: ${message}\n`);
    if (verbose && error instanceof Error && error.stack !== undefined) io.stderr(`${error.stack}\n`);
    return error instanceof CliUsageError || isProviderConfigError(error) ? ExitCode.UsageError : ExitCode.Failed;
  }
}
