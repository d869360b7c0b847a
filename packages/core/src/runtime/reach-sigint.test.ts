import { spawn } from "node:child_process";
import { join } from "node:path";

const ROOT = join(__dirname, "..", "..", "..", "..");

test("SIGINT cancels a run hung at logic depth 3; the next run in the same process starts at depth 1", async () => {
  const child = spawn(process.execPath, ["--require", require.resolve("tsx/cjs"), join(__dirname, "__fixtures__", "reach-sigint-child.ts")], {
    cwd: ROOT,
    env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, "tsconfig.test.json") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on("data", (chunk: Buffer) => {
    lines.push(...chunk.toString().split("\n").filter(Boolean));
    // Interrupt once the run hangs at depth 3, as Ctrl-C would.
    if (lines.includes("depth 3") && !child.killed) child.kill("SIGINT");
  });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done) => child.once("exit", (...exit) => done(exit)));

  expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: "" });
  expect(lines).toEqual([
    "depth 1",
    "depth 2",
    "depth 3",
    "SIGINT",
    "run ended: CancelledError: interrupted by SIGINT",
    "new run: depth 1",
    "outside any run: undefined",
  ]);
}, 60_000); // sized for a loaded 2-core machine
