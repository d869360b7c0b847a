import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionStore } from "rein";
import { compileRein, type CompiledRein } from "./__fixtures__/compiled-rein";
import { ExitCode } from "./exit-codes";

const ROOT = join(__dirname, "..", "..", "..");
const EXAMPLE = join(ROOT, "examples", "cli-chain.ts");
/** `rein` from source (docs/cli.md): node with tsx's require hook, `rein` mapped to the packages' sources; the first test runs it. */
const FROM_SOURCE = [process.execPath, "--require", require.resolve("tsx/cjs"), join(__dirname, "bin.ts")];
const SOURCE_ENV = { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, "tsconfig.test.json"), CLI_CHAIN_PAUSE_MS: "600" };
/** `rein` built (__fixtures__/compiled-rein.ts): the other tests run it, as a user's install does. */
let compiled: CompiledRein;
let REIN: readonly string[];
let ENV: NodeJS.ProcessEnv;

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rein-cli-run-"));
  compiled = await compileRein();
  REIN = compiled.command;
  ENV = { ...process.env, ...compiled.env, CLI_CHAIN_PAUSE_MS: "600" };
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  compiled?.remove();
});

interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function start(command: string, args: readonly string[], env: NodeJS.ProcessEnv): { child: ChildProcess; done: Promise<Finished>; stdout: () => string } {
  const child = spawn(command, args, { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<Finished>((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
  return { child, done, stdout: () => stdout };
}

function rein(args: readonly string[], env: NodeJS.ProcessEnv = ENV) {
  return start(REIN[0]!, [...REIN.slice(1), ...args], env);
}

function readStore(path: string) {
  const store = new SessionStore({ path, shutdownFlush: false });
  try {
    const [session] = store.listSessions();
    return { session: session!, nodes: store.readNodes(session!.id) };
  } finally {
    store.close();
  }
}

const GUARDS = String.raw`Recursion \d+\/\d+(?: [\w.]+)? \| Loop warnings \d+(?:, blocks \d+)? \| Steps \d+\/(?:\d+|∞) \| `;
const STATUS = new RegExp(String.raw`^\[REACH\] Depth (\d+)\/(\d+) \| ${GUARDS}Memory [\d.]+MB\/[\d.]+MB \| Zone local \| Tokens \d+\/∞ \| \d\d:\d\d( \| stalled)?$`);

test("piped: one plain status line per change, then the answer; exit 0; the run is recorded in --store (rein from source)", async () => {
  const store = join(dir, "piped.db");
  const { code, stdout, stderr } = await start(FROM_SOURCE[0]!, [...FROM_SOURCE.slice(1), "run", `${EXAMPLE}#plan`, "--task", "Summarize recursion", "--store", store], SOURCE_ENV).done;
  expect({ code, stderr }).toEqual({ code: ExitCode.Ok, stderr: "" });
  const lines = stdout.trimEnd().split("\n");
  expect(stdout).not.toContain("\r");
  expect(stdout).not.toContain("\x1b");
  expect(lines.at(-1)).toBe("Recursion is a function calling itself on a smaller input until it reaches a base case.");
  const status = lines.slice(0, -1);
  expect(status.length).toBeGreaterThanOrEqual(1);
  expect(status.filter((line) => STATUS.test(line)).map((line) => line.match(STATUS)![1])).toContain("2");
  for (const line of status) expect(line).toMatch(/^\[REACH\] (starting|running|Depth)/);
  // Consecutive lines differ: nothing is printed while only the clock or the memory figure moves.
  const keys = status.map((line) => line.replace(/Memory [^|]*\| /, "").replace(/ \| \d\d:\d\d/, ""));
  keys.forEach((key, index) => index > 0 && expect(key).not.toBe(keys[index - 1]));
  const { session, nodes } = readStore(store);
  expect(session).toMatchObject({ agentId: "Planner", title: "Summarize recursion", nodeCount: 4 });
  expect(nodes.map((node) => [node.name, node.metadata["status"]])).toEqual([
    ["Planner.plan", "completed"],
    ["Researcher.research", "completed"],
    ["scripted-researcher", "completed"],
    ["scripted-planner", "completed"],
  ]);
}, 60_000); // sized for a loaded 2-core machine

test("on a TTY (a real pseudo-terminal via script): the status line is redrawn in place with \\r + ESC[2K", async () => {
  const command = [...REIN, "run", `${EXAMPLE}#plan`, "--task", "'Summarize recursion'", "--store", join(dir, "tty.db")].join(" ");
  const { code, stdout } = await start("script", ["-q", "-e", "-c", command, "/dev/null"], ENV).done;
  expect(code).toBe(ExitCode.Ok);
  const redraws = stdout.split("\r\x1b[2K").slice(1);
  // ~100 ms polls over a run of ≥600 ms: several redraws, each of one line, no newline between them.
  expect(redraws.length).toBeGreaterThanOrEqual(4);
  for (const frame of redraws.slice(0, -1)) expect(frame).toMatch(/^\[REACH\] [^\n]*$/);
  expect(redraws.some((frame) => new RegExp(String.raw`^\[REACH\] Depth 2\/5 \| ${GUARDS}Memory [\d.]+MB\/[\d.]+MB \| Zone local \| Tokens \d+\/∞ \| 00:0\d$`).test(frame))).toBe(true);
  // The last frame ends the line, then the answer follows (the pty turns \n into \r\n).
  expect(redraws.at(-1)).toMatch(/^\[REACH\] [^\n]*\r\nRecursion is a function calling itself on a smaller input until it reaches a base case\.\r\n$/);
}, 60_000); // sized for a loaded 2-core machine

test("the runaway demo in a real pseudo-terminal: the line shows the recursion climbing to its ceiling while reach depth stays 1, with loop warnings and steps of maxSteps", async () => {
  const runaway = join(ROOT, "examples", "runaway-agent.ts");
  const command = [...REIN, "run", `${runaway}#runaway`, "--task", "recursion", "--store", join(dir, "runaway.db")].join(" ");
  const { code, stdout } = await start("script", ["-q", "-e", "-c", command, "/dev/null"], ENV).done;
  expect(code).toBe(ExitCode.Failed);
  const frames = stdout.split("\r\x1b[2K").slice(1).map((frame) => frame.split("\r\n")[0]!);
  const figures = frames
    .map((frame) => /^\[REACH\] Depth (\d+)\/5 \| Recursion (\d+)\/5 WikiAgent\.wiki_agent \| Loop warnings (\d+) \| Steps (\d+)\/100 \| Memory [\d.]+MB\/1177\.6MB \|/.exec(frame))
    .filter((match) => match !== null)
    .map((match) => ({ depth: Number(match![1]), recursion: Number(match![2]), warnings: Number(match![3]), steps: Number(match![4]) }));
  expect(figures.length).toBeGreaterThan(0);
  // Reach depth counts Agent entries: one. The recursion is what reaches the ceiling of 5.
  expect(new Set(figures.map((figure) => figure.depth))).toEqual(new Set([1]));
  expect(figures.at(-1)).toMatchObject({ recursion: 5, warnings: 0 });
  expect(figures.at(-1)!.steps).toBeGreaterThanOrEqual(4);
  expect(stdout).toMatch(/RecursionError: agentic function WikiAgent\.wiki_agent exceeded max nesting depth 5/);
}, 60_000);

test("--max-reach is passed to the child as maxLogicDepth: a depth-2 chain with --max-reach 1 fails in one line, exit 1", async () => {
  const { code, stdout, stderr } = await rein(["run", `${EXAMPLE}#plan`, "--task", "x", "--max-reach", "1", "--store", join(dir, "reach.db")]).done;
  expect(code).toBe(ExitCode.Failed);
  expect(stdout).toMatch(/Depth 1\/1/);
  expect(stderr).toMatch(/^rein: ReachExceededError: [^\n]*depth[^\n]*\n$/);
}, 60_000); // sized for a loaded 2-core machine

test("a store the child cannot open is a one-line typed error, exit 1, not a crash of the run's process", async () => {
  writeFileSync(join(dir, "a-file"), "");
  const { code, stdout, stderr } = await rein(["run", `${EXAMPLE}#plan`, "--task", "x", "--store", join(dir, "a-file", "s.db")]).done;
  expect({ code, stdout, stderr }).toEqual({
    code: ExitCode.Failed,
    stdout: expect.not.stringContaining("Depth"),
    stderr: expect.stringMatching(/^rein: SessionStoreDirectoryError: [^\n]*a-file[^\n]*\n$/),
  });
}, 60_000); // sized for a loaded 2-core machine

test("--verbose adds the child's stack to the one-line error; an unknown entry names the module's entries", async () => {
  const { code, stderr } = await rein(["run", `${EXAMPLE}#nope`, "--task", "x", "--store", join(dir, "bad.db"), "--verbose"]).done;
  expect(code).toBe(ExitCode.Failed);
  expect(stderr.split("\n")[0]).toMatch(/^rein: Error: .*cli-chain\.ts has no entry 'nope' of the form \[AgentClass, "method"\] \(entries: plan, stall, hang\)$/);
  expect(stderr).toMatch(/\n\s+at /);
}, 60_000); // sized for a loaded 2-core machine

test("--verbose writes the reach status stream as JSON lines to the reach log and names the session and the log at the end", async () => {
  const store = join(dir, "verbose.db");
  const log = join(dir, "logs", "reach.log");
  const { code, stderr } = await rein(["run", `${EXAMPLE}#plan`, "--task", "Summarize recursion", "--store", store, "--verbose", "--reach-log", log]).done;
  expect(code).toBe(ExitCode.Ok);
  const named = /^rein: session (\S+) in (.+); reach log (.+)$/m.exec(stderr);
  expect(named?.slice(2)).toEqual([store, log]);
  const { session } = readStore(store);
  expect(named![1]).toBe(session.id);
  const lines = readFileSync(log, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, any>);
  expect(lines.length).toBeGreaterThanOrEqual(2);
  for (const line of lines) expect(line).toMatchObject({ msg: "reach-status", sessionId: session.id, pid: expect.any(Number), time: expect.any(String) });
  // The nested chain's figures: depth 1 (the planner) and 2 (the researcher it calls), against the default limit 5.
  const depths = lines.filter((line) => line["reach"] !== null).map((line) => line["reach"].depth);
  expect(depths).toEqual(expect.arrayContaining([{ used: 1, limit: 5 }, { used: 2, limit: 5 }]));
  // One line per change: no two neighbours carry the same figures (elapsed time and memory's fractions are not changes).
  const figures = (line: Record<string, any>) => {
    const reach = line["reach"];
    if (reach === null) return "none";
    const { depth, zone, tokens, costUsd, memoryMb } = reach;
    return JSON.stringify({ depth, zone, tokens, costUsd, memoryMb: Math.round(memoryMb.used) });
  };
  for (let i = 1; i < lines.length; i++) expect(figures(lines[i]!)).not.toBe(figures(lines[i - 1]!));
}, 60_000); // sized for a loaded 2-core machine

test("Ctrl-C (SIGINT to the parent) is forwarded: exit 130, running nodes recorded interrupted", async () => {
  const store = join(dir, "sigint.db");
  const run = rein(["run", `${EXAMPLE}#hang`, "--task", "wait", "--store", store]);
  await new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if (/Depth 1\/5/.test(run.stdout())) {
        clearInterval(check);
        resolve();
      }
    }, 20);
  });
  run.child.kill("SIGINT");
  const { code, stderr } = await run.done;
  expect(code).toBe(ExitCode.Interrupted);
  expect(stderr).toBe("rein: interrupted\n");
  const { nodes } = readStore(store);
  expect(nodes.map((node) => [node.role, node.name, node.metadata["status"]])).toEqual([
    ["code", "Waiter.wait", "interrupted"],
    ["llm", "scripted-waiter", "completed"],
    ["code", "Waiter.wait_for_signal", "interrupted"],
  ]);
}, 60_000); // sized for a loaded 2-core machine

test("stalled watchdog: a tool that blocks the child's event loop longer than the stall time shows `stalled`, then the run ends", async () => {
  const env = { ...ENV, CLI_CHAIN_BLOCK_MS: "1500" };
  const { code, stdout } = await rein(["run", `${EXAMPLE}#stall`, "--task", "crunch", "--store", join(dir, "stall.db"), "--stall-ms", "500"], env).done;
  expect(code).toBe(ExitCode.Ok);
  const lines = stdout.trimEnd().split("\n");
  expect(lines.some((line) => /^\[REACH\] Depth 1\/5 .* \| stalled$/.test(line))).toBe(true);
  expect(lines.at(-1)).toBe("Crunched.");
}, 60_000); // sized for a loaded 2-core machine

test("--env picks the config/reach.yaml environment (REIN_ENV of the child); --max-reach overrides its depth", async () => {
  const project = mkdtempSync(join(dir, "project-"));
  mkdirSync(join(project, "config"));
  writeFileSync(
    join(project, "config", "reach.yaml"),
    "defaults:\n  max_logic_depth: 4\nenvironments:\n  tight:\n    max_logic_depth: 1\n",
  );
  const run = (args: string[]) => {
    const child = spawn(REIN[0]!, [...REIN.slice(1), "run", `${EXAMPLE}#plan`, "--task", "x", "--store", "s.db", ...args], { cwd: project, env: ENV });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    return new Promise<Finished>((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
  };
  const [defaults, tight, overridden] = await Promise.all([run([]), run(["--env", "tight"]), run(["--env", "tight", "--max-reach", "3"])]);
  // Each run whole in one assertion: a failure shows its stderr too.
  expect(defaults).toMatchObject({ code: ExitCode.Ok, stdout: expect.stringMatching(/Depth 2\/4/) });
  expect(tight).toMatchObject({ code: ExitCode.Failed, stdout: expect.stringMatching(/Depth 1\/1/), stderr: expect.stringMatching(/^rein: ReachExceededError: /) });
  expect(overridden).toMatchObject({ code: ExitCode.Ok, stdout: expect.stringMatching(/Depth 2\/3/) });
}, 60_000); // sized for a loaded 2-core machine

test("a plain .js module is loaded directly; a non-string answer is printed as JSON", async () => {
  writeFileSync(
    join(dir, "echo.js"),
    'class Echo { echo(task) { return { echoed: task }; } }\nexports.entries = { echo: [Echo, "echo"] };\n',
  );
  const { code, stdout, stderr } = await rein(["run", "echo.js#echo", "--task", "hello", "--store", "echo.db"]).done;
  expect({ code, stderr }).toEqual({ code: ExitCode.Ok, stderr: "" });
  expect(stdout.endsWith('{\n  "echoed": "hello"\n}\n')).toBe(true);
}, 60_000); // sized for a loaded 2-core machine

test("values JSON cannot carry as they are: a thrown object with no prototype is a one-line error (exit 1), a bigint or cyclic answer is printed as the session records it (exit 0)", async () => {
  const module = join(__dirname, "__fixtures__", "odd-values.ts");
  const run = (entry: string) => rein(["run", `${module}#${entry}`, "--task", "x", "--store", join(dir, `odd-${entry}.db`)]).done;
  const [thrown, big, cyclic] = await Promise.all([run("throwBare"), run("bigAnswer"), run("cyclicAnswer")]);
  expect(thrown).toMatchObject({ code: ExitCode.Failed, stderr: 'rein: Error: {"reason":"no prototype"}\n' });
  expect(big).toMatchObject({ code: ExitCode.Ok, stderr: "" });
  expect(big.stdout.trimEnd().split("\n").at(-1)).toBe("10n");
  expect(cyclic).toMatchObject({ code: ExitCode.Ok, stderr: "" });
  expect(JSON.parse(cyclic.stdout.slice(cyclic.stdout.indexOf("{")))).toEqual({ name: "loop", self: "[circular]" });
});
