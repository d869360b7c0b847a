/**
 * Every package installs and runs from its `pnpm pack` tarball outside this
 * workspace: the tarballs are installed with `npm install` into a scratch
 * project under the system temp directory (no workspace links), their
 * third-party dependencies served by a registry on 127.0.0.1 (no network),
 * and the scratch project then runs a CommonJS script, an ES module script,
 * a TypeScript type check against the shipped declarations, `npx rein` and
 * the installed `rein` command, a server and the Postgres store's entry point.
 */
import { execFileSync, spawn, spawnSync, type SpawnSyncReturns } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startLocalRegistry, type LocalRegistry } from "./__fixtures__/local-registry";
import { typeCheckProjectsInChild } from "./__fixtures__/type-check-projects";

const ROOT = resolve(__dirname, "..", "..", "..");
const PACKAGES = ["guard", "session", "core", "providers", "rein", "store-postgres", "server", "cli"];

/** The scripted runaway agent of `pnpm demo`, in plain JavaScript, given the module's import line. */
function runawayScript(importLine: string): string {
  return `${importLine}
class WikiAgent extends Agent {
  static instructions = "You are a research assistant for a small wiki.";
  static methodOptions = {
    wiki_agent: {
      tool: true,
      description: "Research a topic on the wiki and summarize it.",
      parameters: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
    },
  };
  static runtime = new Runtime({
    provider: new ScriptedProvider(
      [{ text: "delegating", toolCalls: [{ name: "wiki_agent", input: { topic: "recursion" } }] }],
      { whenExhausted: "repeat-last" },
    ),
  });
  async wiki_agent(topic) {
    return this.ask("Research " + topic + " on the wiki and summarize it.");
  }
}
new WikiAgent().wiki_agent("recursion").then(
  (answer) => console.log(JSON.stringify({ answer })),
  (error) => console.log(JSON.stringify({ error: error.name, recursion: error instanceof RecursionError, message: error.message })),
);
`;
}

const ENTRIES_MODULE = `const { Agent, Runtime, ScriptedProvider } = require("rein");
class Echo extends Agent {
  static runtime = new Runtime({ provider: new ScriptedProvider(["installed and answering"], { whenExhausted: "repeat-last" }) });
  async answer(task) {
    return this.ask(task);
  }
}
exports.entries = { answer: [Echo, "answer"] };
`;

const TYPES_CHECK = `import { Agent, ReachPolicy, type RunResult } from "rein";
import { createServer } from "@rein/server";
import { PostgresSessionStore } from "@rein/store-postgres";
class Typed extends Agent {
  async go(task: string): Promise<string> {
    return this.ask(task);
  }
}
const policy: ReachPolicy = new ReachPolicy({ maxLogicDepth: 3 });
const result: RunResult | undefined = undefined;
void [Typed, policy, result, createServer, PostgresSessionStore];
`;

let work: string;
let project: string;
let tarballFiles: string[] = [];
let registry: LocalRegistry | undefined;

function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd: project, encoding: "utf8", env: { ...cleanEnv(), ...env }, timeout: 240_000 });
}

/**
 * The installed `rein` command: the link npm made in `node_modules/.bin`, started through its `#!/usr/bin/env node`
 * line. It is what `npx rein` finds and starts, after npm's own start-up (about 0.5 s of CPU a run), which
 * "npx rein --help" proves once.
 */
function rein(args: readonly string[]): SpawnSyncReturns<string> {
  return run(join(project, "node_modules", ".bin", "rein"), args);
}

/** Like {@link run}, without blocking the event loop: the registry answers from this process. */
function runAsync(command: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: project, env: { ...cleanEnv(), ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("close", (status) => resolve({ status, output }));
  });
}

/** `npm install <what>` in the scratch project, from the local registry. */
function npmInstall(what: readonly string[]): Promise<{ status: number | null; output: string }> {
  return runAsync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", ...what], {
    npm_config_registry: registry!.url,
    npm_config_cache: join(work, "npm-cache"),
    npm_config_update_notifier: "false",
  });
}

/** The environment of a user's shell: none of the test runner's npm or pnpm settings. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(npm_|pnpm_|PNPM_|NODE_OPTIONS$|TSX_|JEST_|REIN_)/i.test(key)) env[key] = value;
  }
  return env;
}

beforeAll(async () => {
  execFileSync(join(ROOT, "node_modules", ".bin", "tsc"), ["-b"], { cwd: ROOT, stdio: "pipe" });
  work = mkdtempSync(join(tmpdir(), "rein-pack-"));
  const tarballs = join(work, "tarballs");
  mkdirSync(tarballs);
  for (const name of PACKAGES) {
    execFileSync("pnpm", ["pack", "--pack-destination", tarballs], { cwd: join(ROOT, "packages", name), stdio: "pipe" });
  }
  const files = readdirSync(tarballs).map((file) => join(tarballs, file));
  tarballFiles = files;
  registry = await startLocalRegistry({
    workspacePackages: PACKAGES.map((name) => join(ROOT, "packages", name)),
    tarballs: files,
    workDir: join(work, "registry"),
    extra: [{ from: ROOT, name: "tsx" }],
  });
  project = join(work, "project");
  mkdirSync(project);
  // tsx as `npm install -D tsx` records it, installed with the tarballs: one npm run instead of two (a second one,
  // for tsx alone, cost about 3 s of CPU); the test that needs a project without tsx moves it out of the way.
  const devDependencies = { tsx: `^${(JSON.parse(readFileSync(join(ROOT, "node_modules", "tsx", "package.json"), "utf8")) as { version: string }).version}` };
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "scratch", version: "1.0.0", private: true, devDependencies }));
  const install = await npmInstall(files);
  if (install.status !== 0) throw new Error(`npm install failed (${install.status}):\n${install.output}\n${registry.failures.join("\n")}`);
}, 600_000); // tsc -b, pnpm pack of every package and an offline npm install: minutes on a loaded 2-core machine

afterAll(async () => {
  await registry?.close();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe("the packed packages, installed outside the workspace", () => {
  it("installs only from the tarballs and the local registry, with no link into the workspace", () => {
    const listed = run("npm", ["ls", "--all", "--parseable"]);
    expect(listed.stdout).toContain(join(project, "node_modules", "rein"));
    expect(listed.stdout).not.toContain(ROOT);
    // Third-party packages came over the registry's wire format.
    expect(registry!.requested).toEqual(expect.arrayContaining(["pino", "hono", "libsql"]));
  });

  it("a CommonJS script requires rein and the scripted runaway demo stops at the recursion ceiling", () => {
    writeFileSync(join(project, "demo.cjs"), runawayScript(`const { Agent, RecursionError, Runtime, ScriptedProvider } = require("rein");`));
    const result = run(process.execPath, ["demo.cjs"]);
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout)).toMatchObject({ error: "RecursionError", recursion: true });
  });

  it("an ES module imports rein's named exports and runs the same demo", () => {
    writeFileSync(join(project, "demo.mjs"), runawayScript(`import { Agent, RecursionError, Runtime, ScriptedProvider } from "rein";`));
    const result = run(process.execPath, ["demo.mjs"]);
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout)).toMatchObject({ error: "RecursionError", recursion: true });
  });

  it("every tarball carries the package's README.md and LICENSE", () => {
    expect(tarballFiles).toHaveLength(PACKAGES.length);
    for (const tarball of tarballFiles) {
      const listed = run("tar", ["-tzf", tarball]).stdout.split("\n");
      expect({ tarball, readme: listed.includes("package/README.md"), license: listed.includes("package/LICENSE") }).toEqual({ tarball, readme: true, license: true });
    }
  });

  it("TypeScript type-checks against the shipped declarations with the tsconfig README recommends (module nodenext), and with the bundler settings it names", () => {
    writeFileSync(join(project, "typed.ts"), TYPES_CHECK);
    // The tsconfig exactly as README.md shows it, so the page and the test cannot drift apart.
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const shown = /### TypeScript settings[\s\S]*?```json\n([\s\S]*?)```/.exec(readme);
    expect(shown).not.toBeNull();
    const recommended = JSON.parse(shown![1]!) as { compilerOptions: Record<string, unknown> };
    expect(recommended.compilerOptions).toMatchObject({ strict: true, module: "nodenext" });
    const bundler = { compilerOptions: { strict: true, module: "esnext", moduleResolution: "bundler", esModuleInterop: true, target: "es2022", types: ["node"] } };
    const configFiles = ([["tsconfig.json", recommended], ["tsconfig.bundler.json", bundler]] as const).map(([name, config]) => {
      // @types/node comes from this repository (the scratch project installs no types of its own).
      const compilerOptions = { ...config.compilerOptions, noEmit: true, typeRoots: [join(ROOT, "node_modules", "@types")] };
      writeFileSync(join(project, name), JSON.stringify({ compilerOptions, files: ["typed.ts"] }));
      return join(project, name);
    });
    // What `tsc -p` says for each, in one node process: each a full check of every file, the SDKs' declarations and
    // TypeScript's own libs included (no skipLibCheck, no skipDefaultLibCheck); the two programs share only parsing.
    const checks = typeCheckProjectsInChild(configFiles, work);
    expect(checks.map(({ configFile }) => configFile)).toEqual(configFiles);
    for (const { configFile, errors } of checks) expect({ configFile, errors }).toEqual({ configFile, errors: "" });
  }, 600_000); // two full type checks of the SDKs' declarations (no skipLibCheck): minutes on a loaded machine

  it("npx rein --help answers from the installed @rein/cli", () => {
    const result = run("npx", ["--no-install", "rein", "--help"]);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^Usage: rein /m);
    expect(result.stdout).toContain("sessions");
    expect(result.stdout).toContain("serve");
  });

  it("rein run runs an entry of a JavaScript module, records the session, and rein sessions ls lists it", () => {
    writeFileSync(join(project, "agents.cjs"), ENTRIES_MODULE);
    const ran = rein(["run", "agents.cjs#answer", "--task", "hello", "--store", "runs.db"]);
    expect(ran.stderr).toBe("");
    expect(ran.status).toBe(0);
    expect(ran.stdout.trim().split("\n").at(-1)).toBe("installed and answering");
    const listed = rein(["sessions", "ls", "--store", "runs.db"]);
    expect(listed.status).toBe(0);
    expect(listed.stdout).toContain("Echo");
  });

  it("rein run on a TypeScript module without tsx says in one line what to install", () => {
    writeFileSync(join(project, "agents.ts"), ENTRIES_MODULE);
    // The project without tsx: nothing named tsx where rein looks for it (the module's folder and rein's own, up to
    // the root), as before `npm install -D tsx`.
    const tsx = join(project, "node_modules", "tsx");
    const aside = join(project, "node_modules", ".tsx-aside");
    renameSync(tsx, aside);
    let ran: SpawnSyncReturns<string>;
    try {
      ran = rein(["run", "agents.ts#answer", "--task", "hello", "--store", "runs.db"]);
    } finally {
      renameSync(aside, tsx);
    }
    expect(ran.status).toBe(2);
    expect(ran.stderr.trim().split("\n")).toHaveLength(1);
    expect(ran.stderr).toMatch(/tsx/);
  });

  it("with tsx installed in the project, rein run runs the TypeScript module", () => {
    writeFileSync(join(project, "agents.ts"), ENTRIES_MODULE);
    const ran = rein(["run", "agents.ts#answer", "--task", "hello", "--store", "runs.db"]);
    expect(ran.stderr).toBe("");
    expect(ran.status).toBe(0);
    expect(ran.stdout.trim().split("\n").at(-1)).toBe("installed and answering");
  });

  it("@rein/server serves the entries of a module from the installed package", () => {
    writeFileSync(
      join(project, "server.cjs"),
      `const { serve } = require("@rein/server");
const { entries } = require("./agents.cjs");
serve({ entries, mintRootBudget: true }).then(async (server) => {
  const health = await fetch(server.url + "/healthz");
  const ran = await fetch(server.url + "/v1/agent/run", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ entry: "answer", task: "hi" }),
  });
  console.log(JSON.stringify({ health: health.status, run: ran.status, body: await ran.json() }));
  await server.close();
});
`,
    );
    writeFileSync(join(project, "agents.cjs"), ENTRIES_MODULE);
    const result = run(process.execPath, ["server.cjs"]);
    // The one warning a server without REIN_POLICY_SECRET gives at start (docs/server.md); nothing else.
    expect(result.stderr.replace(/^\(node:\d+\) \[REIN_UNSIGNED_BUDGETS\] Warning: [^\n]*\n(\(Use `node --trace-warnings[^\n]*\n)?/, "")).toBe("");
    const output = JSON.parse(result.stdout) as { health: number; run: number; body: { result?: unknown } };
    expect(output).toMatchObject({ health: 200, run: 200 });
    expect(JSON.stringify(output.body)).toContain("installed and answering");
  });

  it("@rein/store-postgres loads from its tarball with pg installed beside it", () => {
    const result = run(process.execPath, ["-e", `const m = require("@rein/store-postgres"); console.log(typeof m.PostgresSessionStore);`]);
    expect(result.stderr).toBe("");
    expect(result.stdout.trim()).toBe("function");
  });
});

describe("docs/cli.md 'Try it', in this monorepo: the built CLI serves a .ts module whose `rein` is the sources", () => {
  it("rein serve examples/cli-chain.ts --mint-root-budget: POST { entry: \"plan\" } completes (two copies of core: the brand, not instanceof, tells a class from a factory)", async () => {
    const store = join(mkdtempSync(join(tmpdir(), "rein-try-it-")), "sessions.db");
    const child = spawn(process.execPath, [join(ROOT, "packages", "cli", "dist", "bin.js"), "serve", "examples/cli-chain.ts", "--port", "0", "--mint-root-budget", "--store", store], {
      cwd: ROOT,
      env: { ...cleanEnv(), TSX_TSCONFIG_PATH: "tsconfig.test.json", CLI_CHAIN_PAUSE_MS: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const exited = new Promise<number | null>((done) => child.once("close", (code) => done(code)));
    const url = await new Promise<string>((found, fail) => {
      child.stdout.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        const listening = /on (http:\/\/[^\s]+) /.exec(output);
        if (listening !== null) found(listening[1]!);
      });
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
      void exited.then((code) => fail(new Error(`rein serve exited (${code}) before listening:\n${output}`)));
    });
    try {
      const response = await fetch(`${url}/v1/agent/run`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ entry: "plan", task: "recursion" }),
      });
      const body = (await response.json()) as { status: string; result?: unknown; error?: unknown };
      expect(body).toMatchObject({ status: "completed", result: expect.stringContaining("Recursion") });
      expect(response.status).toBe(200);
    } finally {
      child.kill("SIGTERM");
    }
    // SIGTERM: a graceful shutdown, exit 0, as the page says.
    expect(await exited).toBe(0);
    rmSync(join(store, ".."), { recursive: true, force: true });
  }, 120_000);
});
