import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionStore } from "rein";
import { compileRein, type CompiledRein } from "./__fixtures__/compiled-rein";

const ROOT = join(__dirname, "..", "..", "..");
const EXAMPLE = join(ROOT, "examples", "cli-chain.ts");
/** `rein` built once (__fixtures__/compiled-rein.ts), started as a user's install starts it. */
let compiled: CompiledRein;
let REIN: readonly string[];
let ENV: NodeJS.ProcessEnv;

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rein-cli-signals-"));
  compiled = await compileRein();
  REIN = compiled.command;
  ENV = { ...process.env, ...compiled.env, CLI_CHAIN_PAUSE_MS: "0" };
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  compiled?.remove();
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test.each([
  ["SIGTERM", 143],
  ["SIGHUP", 129],
] as const)("rein run killed with %s stops its run's process too, waits for it, and exits %d; the run's nodes are recorded interrupted", async (signal, expected) => {
  const store = join(dir, `${signal}.db`);
  const child = spawn(REIN[0]!, [...REIN.slice(1), "run", `${EXAMPLE}#hang`, "--task", "wait", "--store", store], { cwd: dir, env: ENV, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  while (!/Depth 1\/5/.test(stdout)) await new Promise((r) => setTimeout(r, 20));
  // The run's own process: rein's child running run-child.js (tsx may have an esbuild service beside it).
  const listing = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(child.pid)]).toString();
  const runPids = listing.trim().split("\n").filter((line) => line.includes("run-child")).map((line) => Number(line.trim().split(" ")[0]));
  expect(runPids).toHaveLength(1);
  try {
    child.kill(signal);
    expect(await closed).toBe(expected);
    expect(stderr).toBe(`rein: terminated by ${signal}; the run's process was stopped\n`);
    expect(alive(runPids[0]!)).toBe(false);
    const reader = new SessionStore({ path: store, shutdownFlush: false });
    try {
      const [session] = reader.listSessions();
      const wait = reader.readNodes(session!.id).find((node) => node.name === "Waiter.wait")!;
      expect(wait.metadata["status"]).toBe("interrupted");
    } finally {
      reader.close();
    }
  } finally {
    for (const pid of runPids) if (alive(pid)) process.kill(pid, "SIGKILL");
  }
}, 60_000); // sized for a loaded 2-core machine

test("rein run killed with SIGKILL: its run's process notices the parent is gone, stops its run (recorded interrupted) and exits", async () => {
  const store = join(dir, "SIGKILL.db");
  const child = spawn(REIN[0]!, [...REIN.slice(1), "run", `${EXAMPLE}#hang`, "--task", "wait", "--store", store], { cwd: dir, env: ENV, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  const closed = new Promise<NodeJS.Signals | null>((resolve) => child.once("close", (_code, signal) => resolve(signal)));
  while (!/Depth 1\/5/.test(stdout)) await new Promise((r) => setTimeout(r, 20));
  const listing = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(child.pid)]).toString();
  const runPids = listing.trim().split("\n").filter((line) => line.includes("run-child")).map((line) => Number(line.trim().split(" ")[0]));
  expect(runPids).toHaveLength(1);
  try {
    child.kill("SIGKILL");
    expect(await closed).toBe("SIGKILL");
    // No signal reached the run's process: it finds out through its IPC channel, and ends on its own.
    while (alive(runPids[0]!)) await new Promise((r) => setTimeout(r, 20));
    const reader = new SessionStore({ path: store, shutdownFlush: false });
    try {
      const [session] = reader.listSessions();
      const wait = reader.readNodes(session!.id).find((node) => node.name === "Waiter.wait")!;
      expect(wait.metadata["status"]).toBe("interrupted");
    } finally {
      reader.close();
    }
  } finally {
    for (const pid of runPids) if (alive(pid)) process.kill(pid, "SIGKILL");
  }
}, 60_000); // sized for a loaded 2-core machine
