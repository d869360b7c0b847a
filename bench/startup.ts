/**
 * Start-up of the built packages (what a user's `npx rein` runs), as whole
 * processes: `rein --help`, `require("rein")`, and `rein run` up to the
 * moment its first model request reaches an Anthropic-wire server on
 * 127.0.0.1 (the real SDK, loaded on use, picked by `createProvider` from
 * ANTHROPIC_BASE_URL). Each beside bare `node -e 0` in the same run, after
 * warm-up; min / median / max over the counted runs.
 *
 * Targets: `rein --help` ≤ 150 ms; first model request ≤ 300 ms.
 * Run: pnpm exec tsx --tsconfig tsconfig.test.json bench/startup.ts
 */
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { minMedianMax as stats, printTable } from "./measure";

const ROOT = join(__dirname, "..");
const BIN = join(ROOT, "packages", "cli", "dist", "bin.js");
const WARMUP = 3;
const RUNS = 11;

/** An agent module as a user writes it, importing the built `rein`. */
const AGENT_MODULE = `const { Agent } = require(${JSON.stringify(join(ROOT, "packages", "rein", "dist", "index.js"))});
class Greeter extends Agent {
  static instructions = "Answer in one word.";
  async greet(task) {
    return this.ask(task);
  }
}
exports.entries = { greet: [Greeter, "greet"] };
`;

const ANSWER = JSON.stringify({
  id: "msg_bench",
  type: "message",
  role: "assistant",
  model: "bench-model",
  content: [{ type: "text", text: "Hello." }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 2 },
});

/** The same answer as Anthropic's SSE events. */
const STREAM = [
  ["message_start", { type: "message_start", message: { ...JSON.parse(ANSWER), content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 0 } } }],
  ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
  ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hello." } }],
  ["content_block_stop", { type: "content_block_stop", index: 0 }],
  ["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 2 } }],
  ["message_stop", { type: "message_stop" }],
]
  .map(([event, data]) => `event: ${event as string}\ndata: ${JSON.stringify(data)}\n\n`)
  .join("");

function wallMs(start: number): number {
  return performance.timeOrigin + performance.now() - start;
}

/** Milliseconds from spawn to exit (or, with `until`, to the moment `until` resolves). */
async function time(args: readonly string[], env: NodeJS.ProcessEnv, until?: () => Promise<number>): Promise<number> {
  const start = performance.timeOrigin + performance.now();
  const child = spawn(process.execPath, args, { cwd: work, env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number>((resolve, reject) =>
    child.once("close", (code) => (code === 0 ? resolve(wallMs(start)) : reject(new Error(`${args.join(" ")} exited ${code}: ${stderr}`)))),
  );
  if (until === undefined) return exited;
  const reached = await until();
  await exited;
  return reached - start;
}


let work = "";

/** Prints the start-up figures; the packages are built first (`tsc -b`). */
export async function benchStartup(): Promise<void> {
  execFileSync(join(ROOT, "node_modules", ".bin", "tsc"), ["-b"], { cwd: ROOT, stdio: "inherit" });
  work = mkdtempSync(join(tmpdir(), "rein-startup-"));
  writeFileSync(join(work, "agents.cjs"), AGENT_MODULE);
  let arrived: ((at: number) => void) | undefined;
  const server = createServer((request, response) => {
    arrived?.(performance.timeOrigin + performance.now());
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      // rein run listens to its run's events, so the runtime streams: answer as Anthropic streams.
      if (!body.includes('"stream":true')) return void response.writeHead(200, { "content-type": "application/json" }).end(ANSWER);
      response.writeHead(200, { "content-type": "text/event-stream" }).end(STREAM);
    });
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ANTHROPIC_API_KEY: "bench-key",
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    REIN_MODEL: "bench-model",
  };
  const firstRequest = (): Promise<number> => new Promise((resolve) => (arrived = resolve));
  const cases: { name: string; args: string[]; until?: () => Promise<number>; target?: number }[] = [
    { name: "node -e 0 (baseline)", args: ["-e", "0"] },
    { name: "rein --help", args: [BIN, "--help"], target: 150 },
    { name: 'node -e \'require("rein")\'', args: ["-e", `require(${JSON.stringify(join(ROOT, "packages", "rein", "dist", "index.js"))})`] },
    {
      name: "rein run → first model request",
      args: [BIN, "run", "agents.cjs#greet", "--task", "Say hello", "--store", join(work, "runs.db")],
      until: firstRequest,
      target: 300,
    },
  ];
  const samples = new Map<string, number[]>(cases.map((item) => [item.name, []]));
  // Interleaved rounds, so a slow stretch of a shared machine touches every case alike.
  for (let round = 0; round < WARMUP + RUNS; round++) {
    for (const item of cases) {
      const ms = await time(item.args, env, item.until);
      if (round >= WARMUP) samples.get(item.name)!.push(ms);
    }
  }
  server.close();
  rmSync(work, { recursive: true, force: true });

  const baseline = stats(samples.get(cases[0]!.name)!).median;
  console.log(`\nStart-up of the built packages, whole processes (${RUNS} runs after ${WARMUP} warm-up rounds, ms)`);
  const rows = [["case", "min", "median", "max", "median − node", "target", "met"]];
  for (const item of cases) {
    const figure = stats(samples.get(item.name)!);
    rows.push([
      item.name,
      figure.min.toFixed(1),
      figure.median.toFixed(1),
      figure.max.toFixed(1),
      item === cases[0] ? "" : (figure.median - baseline).toFixed(1),
      item.target === undefined ? "" : `≤ ${item.target}`,
      item.target === undefined ? "" : figure.median <= item.target ? "yes" : "NO",
    ]);
  }
  printTable(rows);
}

if (require.main === module) void benchStartup();
