import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { constants as osConstants, tmpdir } from "node:os";
import { extname, join, resolve, sep } from "node:path";
import type { CliIo } from "./cli-io";
import { CliUsageError, ExitCode } from "./exit-codes";
import { isTypeScript, tsxHook } from "./load-module";
import type { ChildResult, ChildRunSpec } from "./run-child";
import { pollStatus, statusPaths } from "./status-channel";
import { formatStatusLine, type StatusMessage } from "./status-line";
import { DEFAULT_REACH_LOG_PATH, DEFAULT_STORE_PATH } from "./default-paths";
import { isPostgresUrl } from "./postgres-store";

/** Options of `rein run`. */
export interface RunCommandOptions {
  /** The task given to the entry. */
  readonly task: string;
  /** The maximum logic depth (the policy's `maxLogicDepth`). @default the config file's, else 5 */
  readonly maxReach?: number;
  /** The `config/reach.yaml` environment (REIN_ENV of the child). @default the inherited REIN_ENV */
  readonly env?: string;
  /** The session store: a SQLite file, or a `postgres://` URL. @default ".rein/sessions.db" */
  readonly store?: string;
  /** The session to record into. @default a new one */
  readonly session?: string;
  /** No status update for this long shows the run as `stalled`. @default 5000 */
  readonly stallMs?: number;
  /** Print the error's stack, and the child's, when the run fails; write the reach status log; name the session at the end. */
  readonly verbose?: boolean;
  /** Where `--verbose` writes the reach status log (JSON lines). @default ".rein/reach.log" */
  readonly reachLog?: string;
}

/** How often the parent asks the child for its status. */
const POLL_MS = 100;
const CLEAR_LINE = "\r\x1b[2K";

function parseTarget(target: string): { module: string; entry: string } {
  const hash = target.lastIndexOf("#");
  if (hash <= 0 || hash === target.length - 1) {
    throw new CliUsageError(`expected <module>#<entry>, e.g. examples/cli-chain.ts#plan, got '${target}'`);
  }
  return { module: target.slice(0, hash), entry: target.slice(hash + 1) };
}

/**
 * The node arguments that run the child script, and the tsx hook the child registers itself right before it loads
 * the module (`ChildRunSpec.tsxHook`), if any.
 *
 * Installed (this file under `node_modules`), the child loads `rein` and its own modules first and registers tsx's
 * hook only then: the hook reads and scans every `.js` file loaded after it (0.1-0.2 s of CPU for `rein`'s), and a
 * `--require` would load tsx in the store's worker thread too. tsx applies a tsconfig's `paths` only to files
 * outside `node_modules`, so what the child loads resolves to the same files with or without the hook, and the
 * module shares them. Anywhere else (this monorepo's `dist/`, with `TSX_TSCONFIG_PATH` mapping `rein` to the
 * sources) the hook comes first, so that the child's `rein` is the one the module imports.
 */
function childCommand(modulePath: string): { args: string[]; tsxHook?: string } {
  // Run from source (this monorepo's tests), the child script itself is TypeScript.
  if (extname(__filename) === ".ts") return { args: ["--require", require.resolve("tsx/cjs"), join(__dirname, "run-child.ts")] };
  const script = join(__dirname, "run-child.js");
  if (!isTypeScript(modulePath)) return { args: [script] };
  const hook = tsxHook(modulePath);
  return __dirname.split(sep).includes("node_modules") ? { args: [script], tsxHook: hook } : { args: ["--require", hook, script] };
}

/**
 * `rein run <module>#<entry> --task "…"`: runs the entry in a child process
 * (which does every reach check), shows the child's reach status — redrawn
 * in place on a TTY, one plain line per change otherwise — forwards Ctrl-C,
 * and prints the answer or the error in one line. Resolves to the exit code.
 * @example
 * ```ts
 * const code = await runCommand(processIo(), "examples/cli-chain.ts#plan", { task: "Summarize recursion" });
 * ```
 */
export async function runCommand(io: CliIo, target: string, options: RunCommandOptions): Promise<number> {
  const { module, entry } = parseTarget(target);
  const modulePath = resolve(io.cwd, module);
  if (!existsSync(modulePath)) throw new CliUsageError(`module not found: ${modulePath}`);
  const command = childCommand(modulePath);
  const statusDir = mkdtempSync(join(tmpdir(), "rein-run-"));
  const paths = statusPaths(statusDir);
  const spec: ChildRunSpec = {
    module: modulePath,
    entry,
    task: options.task,
    maxReach: options.maxReach,
    env: options.env,
    store: options.store !== undefined && isPostgresUrl(options.store) ? options.store : resolve(io.cwd, options.store ?? DEFAULT_STORE_PATH),
    sessionId: options.session ?? randomUUID(),
    statusDir,
    reachLog: options.verbose === true ? resolve(io.cwd, options.reachLog ?? DEFAULT_REACH_LOG_PATH) : undefined,
    tsxHook: command.tsxHook,
  };
  const env: NodeJS.ProcessEnv = { ...io.env, REIN_CLI_RUN: JSON.stringify(spec) };
  if (options.env !== undefined) env["REIN_ENV"] = options.env;
  // Run from source (the monorepo's tests): tsx resolves `rein` to the packages' sources, as jest does.
  const testConfig = join(__dirname, "..", "..", "..", "tsconfig.test.json");
  if (extname(__filename) === ".ts" && env["TSX_TSCONFIG_PATH"] === undefined && existsSync(testConfig)) env["TSX_TSCONFIG_PATH"] = testConfig;
  // The IPC channel is how the child learns that this process is gone, however it died (SIGKILL too): it then stops its run.
  const child = spawn(process.execPath, command.args, { cwd: io.cwd, env, stdio: ["ignore", "pipe", "pipe", "ipc"] });

  // With --verbose, where to look afterwards: the session (for `rein sessions export`) and the reach log.
  const where = (): void => {
    if (options.verbose === true) io.stderr(`rein: session ${spec.sessionId} in ${isPostgresUrl(spec.store) ? "the Postgres store" : spec.store}; reach log ${spec.reachLog}\n`);
  };
  const started = Date.now();
  const stallMs = options.stallMs ?? 5000;
  let latest: StatusMessage | undefined;
  let lastChangeAt = started;
  let drawn = false;
  let lastPlain = "";
  let interrupted = false;

  const render = (): void => {
    const stalled = Date.now() - lastChangeAt >= stallMs;
    const line = formatStatusLine(latest, { stalled, elapsedMs: Date.now() - started });
    if (io.isTTY) {
      io.stdout(`${CLEAR_LINE}${line}`);
      drawn = true;
    } else {
      // Piped: a line when something other than the clock and the memory figure changes.
      const key = line.replace(/ \| \d+(:\d\d)+/, "").replace(/Memory [^|]*\| /, "");
      if (key !== lastPlain) io.stdout(`${line}\n`);
      lastPlain = key;
    }
  };
  // The child's own output goes above the status line.
  const passThrough = (write: (text: string) => void) => (chunk: Buffer) => {
    if (drawn) io.stdout(CLEAR_LINE);
    drawn = false;
    write(chunk.toString());
  };
  child.stdout!.on("data", passThrough(io.stdout));
  child.stderr!.on("data", passThrough(io.stderr));

  let polling = false;
  const poll = setInterval(() => {
    if (polling) return;
    polling = true;
    void pollStatus(paths).then((status) => {
      polling = false;
      if (status !== undefined && status.seq !== latest?.seq) {
        latest = status;
        lastChangeAt = Date.now();
      }
      render();
    });
  }, POLL_MS);
  const onSigint = (): void => {
    interrupted = true;
    child.kill("SIGINT");
  };
  process.on("SIGINT", onSigint);
  // SIGTERM or SIGHUP (a supervisor stopping it, the terminal closing) stops the run's process too:
  // as SIGTERM, which its store answers by recording running nodes interrupted. rein waits for it.
  let terminatedBy: NodeJS.Signals | undefined;
  const onTerminate = (signal: NodeJS.Signals): void => {
    terminatedBy ??= signal;
    child.kill("SIGTERM");
  };
  process.on("SIGTERM", onTerminate);
  process.on("SIGHUP", onTerminate);

  try {
    const exitCode = await new Promise<number | null>((done) => child.once("close", (code) => done(code)));
    clearInterval(poll);
    // The child's last status (a run can end between two polls): shown before the result.
    const last = await pollStatus(paths);
    if (last !== undefined && last.seq !== latest?.seq) {
      latest = last;
      lastChangeAt = Date.now();
      render();
    }
    if (drawn) io.stdout("\n");
    let result: ChildResult | undefined;
    try {
      result = JSON.parse(readFileSync(paths.result, "utf8")) as ChildResult;
    } catch {
      result = undefined;
    }
    if (terminatedBy !== undefined) {
      io.stderr(`rein: terminated by ${terminatedBy}; the run's process was stopped\n`);
      where();
      return 128 + osConstants.signals[terminatedBy];
    }
    if (interrupted || (result !== undefined && !result.ok && result.interrupted === true)) {
      io.stderr("rein: interrupted\n");
      where();
      return ExitCode.Interrupted;
    }
    if (result === undefined) {
      io.stderr(`rein: the run's process ended with code ${exitCode ?? "none"} before reporting a result\n`);
      return ExitCode.Failed;
    }
    if (result.ok) {
      io.stdout(`${typeof result.answer === "string" ? result.answer : JSON.stringify(result.answer, null, 2)}\n`);
      where();
      return ExitCode.Ok;
    }
    io.stderr(`rein: ${result.error.name}: ${result.error.message}\n`);
    if (options.verbose === true && result.error.stack !== undefined) io.stderr(`${result.error.stack}\n`);
    where();
    return ExitCode.Failed;
  } finally {
    clearInterval(poll);
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onTerminate);
    process.off("SIGHUP", onTerminate);
    rmSync(statusDir, { recursive: true, force: true });
  }
}
