import { spawn } from "node:child_process";
import { mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runInThisContext } from "node:vm";
import { UsageError } from "../errors/rein-error";
import { loadReachConfig, ReachConfigError, ReachConfigPolicy, type ReachConfigOptions } from "./reach-config";
import { ReachPolicy, type ReachLimits } from "./reach-policy";

const SEED = `# reach limits
defaults:
  max_logic_depth: 5
  max_memory_mb: 1024
  memory_growth: 0.15
  allowed_zones: [local, docker-network]
  max_tokens: 200000
environments:
  dev:
    max_logic_depth: 8
  prod:
    max_logic_depth: 3
    allowed_zones: [docker-network]
    max_cost_usd: 2.5
    timeout_ms: 60000
`;

const FAST: ReachConfigOptions = { debounceMs: 20 };

let directory: string;
const opened: ReachConfigPolicy[] = [];
const savedEnvironment = { REIN_ENV: process.env.REIN_ENV, REIN_REACH_CONFIG: process.env.REIN_REACH_CONFIG };

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), "rein-reach-config-"));
  delete process.env.REIN_ENV;
  delete process.env.REIN_REACH_CONFIG;
});

afterEach(() => {
  for (const policy of opened.splice(0)) policy.close();
  rmSync(directory, { recursive: true, force: true });
  for (const [name, value] of Object.entries(savedEnvironment)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  jest.restoreAllMocks();
});

function configFile(text: string, name = "reach.yaml"): string {
  const file = join(directory, name);
  writeFileSync(file, text);
  return file;
}

function load(path?: string, options: ReachConfigOptions = FAST): ReachConfigPolicy {
  const policy = loadReachConfig(path, options);
  opened.push(policy);
  return policy;
}

function loadError(text: string, options: ReachConfigOptions = { watch: false, reloadSignal: false }): ReachConfigError {
  const file = configFile(text);
  try {
    load(file, options);
  } catch (error) {
    if (ReachConfigError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a ReachConfigError");
}

async function until(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 10));
  }
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

// Jest gives each test file its own `process` object (an EventEmitter of its
// own); Node delivers signals and warnings on the real one.
const realProcess = runInThisContext("process") as NodeJS.Process;

describe("loadReachConfig: loading", () => {
  it("reads defaults only when REIN_ENV is unset, keeping ReachPolicy's defaults for absent keys", () => {
    const file = configFile(SEED);
    const policy = load(file);
    expect(policy).toBeInstanceOf(ReachPolicy);
    expect(policy.path).toBe(file);
    expect(policy.environment).toBeUndefined();
    expect(policy.limits).toMatchObject<Partial<ReachLimits>>({
      maxLogicDepth: 5,
      maxMemoryMb: 1024,
      memoryGrowth: 0.15,
      allowedZones: ["local", "docker-network"],
      maxTokens: 200000,
      maxCostUsd: Infinity,
      timeoutMs: Infinity,
    });
  });

  it("lets the REIN_ENV environment override defaults key by key", () => {
    process.env.REIN_ENV = "prod";
    const policy = load(configFile(SEED));
    expect(policy.environment).toBe("prod");
    expect(policy.limits).toMatchObject<Partial<ReachLimits>>({
      maxLogicDepth: 3,
      maxMemoryMb: 1024,
      memoryGrowth: 0.15,
      allowedZones: ["docker-network"],
      maxTokens: 200000,
      maxCostUsd: 2.5,
      timeoutMs: 60000,
    });
  });

  it("takes the environment option before REIN_ENV, and treats an empty REIN_ENV as unset", () => {
    process.env.REIN_ENV = "prod";
    expect(load(configFile(SEED), { ...FAST, environment: "dev" }).limits.maxLogicDepth).toBe(8);
    process.env.REIN_ENV = "";
    expect(load(configFile(SEED)).limits.maxLogicDepth).toBe(5);
  });

  it("accepts .inf for unlimited and empty sections", () => {
    const policy = load(configFile("defaults:\n  max_tokens: .inf\nenvironments:\n  dev:\n"), { ...FAST, environment: "dev" });
    expect(policy.limits.maxTokens).toBe(Infinity);
    expect(policy.limits.maxLogicDepth).toBe(5);
  });

  it("reads config/reach.yaml under process.cwd() by default, REIN_REACH_CONFIG when set, and an explicit path first", () => {
    mkdirSync(join(directory, "config"));
    const defaultFile = configFile("defaults:\n  max_logic_depth: 2\n", "config/reach.yaml");
    const otherFile = configFile("defaults:\n  max_logic_depth: 7\n", "other.yaml");
    jest.spyOn(process, "cwd").mockReturnValue(directory);
    expect(load().path).toBe(defaultFile);
    expect(load().limits.maxLogicDepth).toBe(2);
    process.env.REIN_REACH_CONFIG = "other.yaml";
    expect(load().path).toBe(otherFile);
    expect(load().limits.maxLogicDepth).toBe(7);
    expect(load("config/reach.yaml").limits.maxLogicDepth).toBe(2);
  });

  it("keeps the pricing option (the file has no prices)", () => {
    const pricing = { "model-a": { inputPerMTok: 1, outputPerMTok: 2 } };
    const policy = load(configFile(SEED), { ...FAST, pricing });
    expect(policy.limits.pricing).toEqual(pricing);
    policy.reload();
    expect(policy.limits.pricing).toEqual(pricing);
  });
});

describe("loadReachConfig: errors", () => {
  it("refuses a REIN_ENV that names no environment, naming the environments the file has", () => {
    process.env.REIN_ENV = "staging";
    const error = loadError(SEED);
    expect(error).toBeInstanceOf(UsageError);
    expect(error.name).toBe("ReachConfigError");
    expect(error.key).toBe("REIN_ENV");
    expect(error.value).toBe("staging");
    expect(error.message).toBe(`reach config ${error.file}: REIN_ENV="staging" names no environment (the file has: dev, prod)`);
    expect(loadError("defaults:\n  max_tokens: 10\n").message).toContain("(the file has no environments)");
  });

  it("refuses a missing file, naming it and the way out", () => {
    const file = join(directory, "absent.yaml");
    expect(() => load(file)).toThrow(ReachConfigError);
    expect(() => load(file)).toThrow(`reach config ${file}: file not found (pass a path to loadReachConfig or set REIN_REACH_CONFIG)`);
  });

  it("refuses a YAML syntax error with its line and column", () => {
    const error = loadError("defaults:\n  max_logic_depth: 5\n  allowed_zones: [local\nenvironments: {}\n");
    expect(error.line).toBe(4);
    expect(error.column).toBe(1);
    expect(error.message).toMatch(new RegExp(`^reach config ${error.file}:4:1: YAML syntax error: `));
  });

  it("refuses a duplicate key as a YAML error", () => {
    const error = loadError("defaults:\n  max_logic_depth: 5\n  max_logic_depth: 6\n");
    expect(error.message).toContain(`${error.file}:3:3: YAML syntax error: Map keys must be unique`);
  });

  it("refuses an empty file (a half-written file must not reset the limits)", () => {
    expect(loadError("# nothing yet\n").message).toContain("the file is empty");
  });

  it.each([
    ["a negative depth", "environments:\n  prod:\n    max_logic_depth: -1\n", "environments.prod.max_logic_depth", -1, "must be a positive integer, got -1", 3, 22],
    ["a fractional depth", "defaults:\n  max_logic_depth: 2.5\n", "defaults.max_logic_depth", 2.5, "must be a positive integer, got 2.5", 2, 20],
    ["a zero memory", "defaults:\n  max_memory_mb: 0\n", "defaults.max_memory_mb", 0, "must be a positive number, got 0", 2, 18],
    ["memory_growth < 0", "defaults:\n  memory_growth: -0.1\n", "defaults.memory_growth", -0.1, "must be a number ≥ 0 (0.15 = 15% more per level), got -0.1", 2, 18],
    ["empty zones", "environments:\n  dev:\n    allowed_zones: []\n", "environments.dev.allowed_zones", [], "must be a non-empty list of zone names, got []", 3, 20],
    ["a zone that is not a name", "defaults:\n  allowed_zones: [local, 3]\n", "defaults.allowed_zones", ["local", 3], 'must be a non-empty list of zone names, got ["local",3]', 2, 18],
    ["a quoted number", 'defaults:\n  max_tokens: "5000"\n', "defaults.max_tokens", "5000", 'must be a positive integer (or .inf for unlimited), got "5000"', 2, 15],
    ["a null value", "defaults:\n  timeout_ms:\n", "defaults.timeout_ms", null, "must be a positive number (or .inf for unlimited), got null", 2, 14],
    ["a negative cost", "environments:\n  prod:\n    max_cost_usd: -3\n", "environments.prod.max_cost_usd", -3, "must be a positive number (or .inf for unlimited), got -3", 3, 19],
    ["an unknown key", "defaults:\n  max_depth: 4\n", "defaults.max_depth", 4, "unknown key defaults.max_depth (known: max_logic_depth, max_memory_mb, memory_growth, allowed_zones, max_tokens, max_cost_usd, timeout_ms)", 2, 3],
    ["a camelCase key", "environments:\n  dev:\n    maxLogicDepth: 4\n", "environments.dev.maxLogicDepth", 4, "unknown key environments.dev.maxLogicDepth (did you mean max_logic_depth?)", 3, 5],
    ["an unknown top-level key", "defaults: {}\nenvironment:\n  prod: {}\n", "environment", { prod: {} }, "unknown key environment (known: defaults, environments)", 2, 1],
    ["a section that is not a mapping", "defaults: 5\n", "defaults", 5, "defaults must be a mapping of limits such as max_logic_depth: 5, got 5", 1, 11],
    ["environments that are not a mapping", "environments: [prod]\n", "environments", ["prod"], 'environments must be a mapping of environment names to limits, got ["prod"]', 1, 15],
  ])("refuses %s, naming file, key and value", (_case, text, key, value, problem, line, column) => {
    const error = loadError(text);
    expect(error.file).toBe(join(directory, "reach.yaml"));
    expect(error.key).toBe(key);
    expect(error.value).toEqual(value);
    expect([error.line, error.column]).toEqual([line, column]);
    const expected = problem.startsWith("must be") ? `${key} ${problem}` : problem;
    expect(error.message).toBe(`reach config ${error.file}:${line}:${column}: ${expected}`);
  });

  it("validates every environment, not only the chosen one", () => {
    process.env.REIN_ENV = "dev";
    expect(loadError(`${SEED}  broken:\n    max_logic_depth: 0\n`).key).toBe("environments.broken.max_logic_depth");
  });
});

describe("ReachConfigPolicy: reloads", () => {
  it("reloads when the file is written in place", async () => {
    const file = configFile(SEED);
    const reloaded: ReachLimits[] = [];
    const policy = load(file, { ...FAST, onReload: (limits) => reloaded.push(limits) });
    writeFileSync(file, SEED.replace("max_logic_depth: 5", "max_logic_depth: 9"));
    await until(() => policy.limits.maxLogicDepth === 9, "the reload");
    expect(reloaded.map((limits) => limits.maxLogicDepth)).toEqual([9]);
  });

  it("reloads when the file is replaced by a rename (write a temp file, rename over it), again and again", async () => {
    const file = configFile(SEED);
    const policy = load(file);
    for (const depth of [11, 12]) {
      const temporary = join(directory, `.reach.yaml.${depth}.tmp`);
      writeFileSync(temporary, SEED.replace("max_logic_depth: 5", `max_logic_depth: ${depth}`));
      renameSync(temporary, file);
      await until(() => policy.limits.maxLogicDepth === depth, `depth ${depth}`);
    }
  });

  it("reloads when a symlinked file's target changes in another directory", async () => {
    const targetDirectory = mkdtempSync(join(tmpdir(), "rein-reach-target-"));
    try {
      const target = join(targetDirectory, "reach.yaml");
      writeFileSync(target, SEED);
      const link = join(directory, "reach.yaml");
      symlinkSync(target, link);
      const policy = load(link);
      writeFileSync(target, SEED.replace("max_logic_depth: 5", "max_logic_depth: 13"));
      await until(() => policy.limits.maxLogicDepth === 13, "the reload through the symlink");
    } finally {
      rmSync(targetDirectory, { recursive: true, force: true });
    }
  });

  it("applies only the last of rapid writes, once (debounced)", async () => {
    const file = configFile(SEED);
    const reloaded: number[] = [];
    const policy = load(file, { debounceMs: 100, onReload: (limits) => reloaded.push(limits.maxLogicDepth) });
    for (const depth of [21, 22, 23, 24]) writeFileSync(file, SEED.replace("max_logic_depth: 5", `max_logic_depth: ${depth}`));
    await until(() => policy.limits.maxLogicDepth === 24, "the reload");
    await sleep(150);
    expect(reloaded).toEqual([24]);
  });

  it("reloads on SIGUSR1 (the handler is installed, so the process survives)", async () => {
    const file = configFile(SEED);
    const before = process.listenerCount("SIGUSR1");
    const policy = load(file, { ...FAST, watch: false });
    expect(process.listenerCount("SIGUSR1")).toBe(before + 1);
    const forward = () => process.emit("SIGUSR1", "SIGUSR1");
    realProcess.on("SIGUSR1", forward);
    try {
      writeFileSync(file, SEED.replace("max_logic_depth: 5", "max_logic_depth: 14"));
      process.kill(process.pid, "SIGUSR1");
      await until(() => policy.limits.maxLogicDepth === 14, "the SIGUSR1 reload");
    } finally {
      realProcess.off("SIGUSR1", forward);
    }
  });

  it("uses the reloadSignal option, or no signal with false", () => {
    const beforeHangup = process.listenerCount("SIGHUP");
    const beforeUser = process.listenerCount("SIGUSR1");
    const file = configFile(SEED);
    const hangup = load(file, { ...FAST, watch: false, reloadSignal: "SIGHUP" });
    load(file, { ...FAST, watch: false, reloadSignal: false });
    expect([process.listenerCount("SIGHUP"), process.listenerCount("SIGUSR1")]).toEqual([beforeHangup + 1, beforeUser]);
    hangup.close();
    expect(process.listenerCount("SIGHUP")).toBe(beforeHangup);
  });

  it("keeps the previous limits when a reload fails and reports the error through onError", async () => {
    const file = configFile(SEED);
    const errors: ReachConfigError[] = [];
    const policy = load(file, { ...FAST, onError: (error) => errors.push(error) });
    const before = policy.limits;
    writeFileSync(file, SEED.replace("max_logic_depth: 5", "max_logic_depth: -2"));
    await until(() => errors.length > 0, "the reported error");
    expect(policy.limits).toBe(before);
    expect(errors[0]).toBeInstanceOf(ReachConfigError);
    expect(errors[0]?.message).toBe(`reach config ${file}:3:20: defaults.max_logic_depth must be a positive integer, got -2`);
    writeFileSync(file, "defaults: [\n");
    await until(() => errors.length > 1, "the syntax error");
    expect(errors[1]?.message).toContain("YAML syntax error");
    writeFileSync(file, SEED.replace("max_logic_depth: 5", "max_logic_depth: 6"));
    await until(() => policy.limits.maxLogicDepth === 6, "the repaired file's reload");
    expect(errors).toHaveLength(2);
  });

  it("reports a failed reload as a process warning when there is no onError, and survives an onError that throws", async () => {
    const file = configFile(SEED);
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    realProcess.on("warning", onWarning);
    try {
      load(file);
      load(file, {
        ...FAST,
        onError: () => {
          throw new Error("the reporter broke");
        },
      });
      rmSync(file);
      await until(() => warnings.length >= 2, "two warnings");
      expect(warnings.map((warning) => warning.message).sort()).toEqual(
        [`reach config ${file}: file not found (pass a path to loadReachConfig or set REIN_REACH_CONFIG)`, "the reporter broke"].sort(),
      );
      expect(warnings.find((warning) => warning.name === "ReachConfigError")).toBeDefined();
    } finally {
      realProcess.off("warning", onWarning);
    }
  });

  it("reload() applies the file now and throws a ReachConfigError, keeping the limits, when it cannot", () => {
    const file = configFile(SEED);
    const policy = load(file, { ...FAST, watch: false });
    writeFileSync(file, SEED.replace("max_logic_depth: 5", "max_logic_depth: 4"));
    policy.reload();
    expect(policy.limits.maxLogicDepth).toBe(4);
    writeFileSync(file, SEED.replace("max_logic_depth: 5", "max_logic_depth: nope"));
    expect(() => policy.reload()).toThrow('defaults.max_logic_depth must be a positive integer, got "nope"');
    expect(policy.limits.maxLogicDepth).toBe(4);
  });

  it("never changes the limits a run already took: a reload swaps in a new frozen snapshot", async () => {
    const file = configFile(SEED);
    const policy = load(file);
    const taken = policy.limits;
    writeFileSync(file, SEED.replace("max_logic_depth: 5", "max_logic_depth: 50").replace("max_tokens: 200000", "max_tokens: 900000"));
    await until(() => policy.limits.maxLogicDepth === 50, "the reload");
    expect(Object.isFrozen(taken)).toBe(true);
    expect(Object.isFrozen(policy.limits)).toBe(true);
    expect([taken.maxLogicDepth, taken.maxTokens]).toEqual([5, 200000]);
    expect(policy.limits.maxTokens).toBe(900000);
  });

  it("close() stops file and signal reloads, is idempotent, and nothing keeps the process alive", async () => {
    const file = configFile(SEED);
    const beforeSignal = process.listenerCount("SIGUSR1");
    const keepAlive = () => process.getActiveResourcesInfo().filter((name) => name === "FSEventWrap" || name === "SignalWrap").length;
    const beforeHandles = keepAlive();
    const policy = load(file);
    expect(keepAlive()).toBe(beforeHandles);
    policy.close();
    policy.close();
    expect(process.listenerCount("SIGUSR1")).toBe(beforeSignal);
    writeFileSync(file, SEED.replace("max_logic_depth: 5", "max_logic_depth: 15"));
    await sleep(200); // ten debounce periods: a live watcher would have reloaded by now
    expect(policy.limits.maxLogicDepth).toBe(5);
  });
});

describe("ReachConfigPolicy: in a plain Node process", () => {
  function runChild(file: string, watchMode: "watch" | "no-watch") {
    const child = spawn(process.execPath, ["--require", require.resolve("tsx/cjs"), join(__dirname, "__fixtures__", "reach-config-child.ts"), file, watchMode], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    let errors = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (errors += chunk.toString()));
    const exited = new Promise<number | null>((done, fail) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        fail(new Error(`the child did not exit by itself within 40 s (output: ${JSON.stringify(output)}): something keeps it alive`));
      }, 40_000); // a tsx start-up takes seconds on a loaded machine
      child.on("exit", (code) => {
        clearTimeout(timer);
        done(code);
      });
    });
    return { child, exited, output: () => output, errors: () => errors };
  }

  it("reloads on a real SIGUSR1, then exits by itself: the watchers and the signal listener keep nothing alive", async () => {
    const file = configFile(SEED);
    const run = runChild(file, "no-watch");
    await until(() => run.output().includes("ready 5"), "the child to load", 15_000);
    writeFileSync(file, SEED.replace("max_logic_depth: 5", "max_logic_depth: 16"));
    run.child.kill("SIGUSR1");
    expect(await run.exited).toBe(0);
    expect(run.output()).toBe("ready 5\nreloaded 16\n");
    expect(run.errors()).not.toContain("Debugger listening");
  });

  it("reloads on a file change, then exits by itself without close()", async () => {
    const file = configFile(SEED);
    const run = runChild(file, "watch");
    await until(() => run.output().includes("ready 5"), "the child to load", 15_000);
    writeFileSync(file, SEED.replace("max_logic_depth: 5", "max_logic_depth: 17"));
    expect(await run.exited).toBe(0);
    expect(run.output()).toBe("ready 5\nreloaded 17\n");
  });
});
