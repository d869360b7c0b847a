import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodePolicyHeader, SessionStore } from "rein";
import type { CliIo } from "./cli-io";
import { ExitCode } from "./exit-codes";
import { serveCommand } from "./serve-command";
import { compileRein, type CompiledRein } from "./__fixtures__/compiled-rein";
import { runMain } from "./__fixtures__/run-main";

const ROOT = join(__dirname, "..", "..", "..");
const EXAMPLE = join(ROOT, "examples", "cli-chain.ts");
/** `rein` built once (__fixtures__/compiled-rein.ts), started as a user's install starts it. */
let rein: CompiledRein | undefined;

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rein-cli-serve-"));
  process.env["CLI_CHAIN_PAUSE_MS"] = "0";
  rein = await compileRein();
});
afterAll(() => {
  delete process.env["CLI_CHAIN_PAUSE_MS"];
  rmSync(dir, { recursive: true, force: true });
  rein?.remove();
});

function postRun(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}/v1/agent/run`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

describe("rein serve <module>", () => {
  it("serves the module's entries, clamps received budgets to --max-reach, records into --store, and stops when asked", async () => {
    let out = "";
    let listening: (url: string) => void = () => undefined;
    const url = new Promise<string>((resolve) => (listening = resolve));
    const io: CliIo = {
      stdout: (text) => {
        out += text;
        const found = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (found) listening(found[1]!);
      },
      stderr: (text) => (out += text),
      isTTY: false,
      cwd: dir,
      env: process.env,
    };
    let stop: (code: number) => void = () => undefined;
    const until = new Promise<number>((resolve) => (stop = resolve));
    const store = join(dir, "served.db");
    const serving = serveCommand(io, EXAMPLE, { port: 0, store, maxReach: 1, until });
    const base = await url;

    // Without X-Agent-Policy (no --mint-root-budget): 400 naming the header.
    const refused = await postRun(base, { entry: "plan", task: "recursion" });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(await refused.json())).toContain("X-Agent-Policy");

    // A budget of depth 3 is clamped to the local --max-reach 1: plan nests a second agent, so the run is refused.
    const clamped = await postRun(base, { entry: "plan", task: "recursion", sessionId: "clamped" }, { "X-Agent-Policy": encodePolicyHeader({ depth: 3 }) });
    const clampedBody = (await clamped.json()) as { status: string; budget: { depth: number }; error?: { name: string } };
    expect(clampedBody.budget.depth).toBe(1);
    expect(clampedBody.status).toBe("error");
    expect(clampedBody.error?.name).toBe("ReachExceededError");

    // On start it looked for interrupted runs of the store (none here) and said so.
    for (let i = 0; i < 100 && !out.includes("rein serve: resumed"); i++) await new Promise((r) => setTimeout(r, 10));
    expect(out).toContain("rein serve: resumed 0 interrupted run(s); left 0 for POST /v1/runs/:id/resume");
    stop(ExitCode.Ok);
    expect(await serving).toBe(ExitCode.Ok);
    expect(out).toContain("rein serve: stopped");
    // The runs were recorded in the store file, which the command closed.
    const listed = await runMain(["sessions", "ls", "--store", store], dir);
    expect(listed.stdout).toContain("clamped");
  });

  it("a real `rein serve` process answers runs and exits 0 on SIGTERM after a graceful shutdown", async () => {
    const [node, ...reinArgs] = rein!.command;
    const child = spawn(node!, [...reinArgs, "serve", EXAMPLE, "--port", "0", "--mint-root-budget", "--store", join(dir, "process.db")], {
      cwd: dir,
      env: { ...process.env, ...rein!.env, CLI_CHAIN_PAUSE_MS: "0" },
    });
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
    const base = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
        const found = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
        if (found) resolve(found[1]!);
      });
      void exited.then(() => reject(new Error(`rein serve exited early: ${stderr}`)));
    });
    const ran = await postRun(base, { entry: "plan", task: "recursion" });
    expect(ran.status).toBe(200);
    expect(await ran.json()).toMatchObject({ status: "completed", result: expect.stringContaining("base case") });
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(stdout).toContain("rein serve: stopped");
    expect(stderr).toBe("");
    const store = new SessionStore({ path: join(dir, "process.db"), shutdownFlush: false });
    try {
      expect(store.listSessions()).toHaveLength(1);
    } finally {
      store.close();
    }
  }, 60_000); // sized for a loaded 2-core machine

  it("with no model provider configured for a class entry, it does not start: a one-line ProviderConfigError naming the entry and what to set, exit 2", async () => {
    const saved = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"].map((name) => [name, process.env[name]] as const);
    for (const [name] of saved) delete process.env[name];
    try {
      const refused = await runMain(["serve", join(ROOT, "packages", "cli", "src", "__fixtures__", "no-provider.ts"), "--port", "0", "--store", join(dir, "none.db")], dir);
      expect(refused.code).toBe(ExitCode.UsageError);
      expect(refused.stdout).toBe("");
      expect(refused.stderr).toBe(
        "rein: entry answer has no model provider: No model provider configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY (or OPENAI_BASE_URL for an OpenAI-compatible server), or pass { provider }\n",
      );
    } finally {
      for (const [name, value] of saved) if (value !== undefined) process.env[name] = value;
    }
    // An entry whose class brings its own provider (the example's ScriptedProvider) starts without any key: see the tests above.
  });

  it("a module without `entries` or a bad --port is a one-line usage error", async () => {
    const noEntries = await runMain(["serve", join(ROOT, "packages", "cli", "src", "exit-codes.ts")], dir);
    expect(noEntries.code).toBe(ExitCode.UsageError);
    expect(noEntries.stderr).toMatch(/^rein: .*exports no `entries`.*\n$/);
    const badPort = await runMain(["serve", EXAMPLE, "--port", "70000"], dir);
    expect(badPort.code).toBe(ExitCode.UsageError);
    expect(badPort.stderr).toContain("--port must be an integer from 0 to 65535, got '70000'");
  });
});
