/**
 * @rein/server's cost: a scripted run (one model request, zero-latency
 * scripted model, DAG recording on, a reach budget) called in-process vs
 * through the server in-process (`app.request`, Hono's fetch) vs over a real
 * socket on 127.0.0.1 (`fetch`, keep-alive). Sequential calls give
 * p50/p99 latency and the latency the server adds; concurrent calls give
 * requests/s. All figures come from one run.
 *
 *   tsx --tsconfig tsconfig.test.json bench/server.ts
 */
import { Agent, Context, InMemorySessionStore, Runtime, ScriptedProvider, encodePolicyHeader, withReachBudget } from "rein";
import { createServer, serve } from "@rein/server";
import { printTable } from "./measure";

class BenchResearcher extends Agent {
  static runtime = new Runtime({ provider: new ScriptedProvider(["done"], { whenExhausted: "repeat-last", recordRequests: false }) });
  async research(task: string): Promise<string> {
    return this.ask(task);
  }
}

const SEQUENTIAL = 2_000;
const CONCURRENT = 4_000;
const PARALLEL = 32;

async function latencies(call: (i: number) => Promise<unknown>, count: number): Promise<number[]> {
  for (let i = 0; i < 300; i++) await call(i); // warm-up
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    await call(i);
    times.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  return times.sort((a, b) => a - b);
}

async function throughput(call: (i: number) => Promise<unknown>, count: number): Promise<number> {
  let next = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < count) await call(next++);
    }),
  );
  return count / (Number(process.hrtime.bigint() - start) / 1e9);
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;

export async function benchServer(): Promise<void> {
  delete process.env["REIN_POLICY_SECRET"];
  const header = encodePolicyHeader({ depth: 3 });
  const store = new InMemorySessionStore();
  const direct = (i: number) =>
    Context.forSession(store, `direct-${i % 1000}`).bind(() => withReachBudget({ depth: 3 }, () => new BenchResearcher().research(`task ${i}`)))();

  const app = createServer({ entries: { research: [BenchResearcher, "research"] }, store });
  const body = (i: number) => JSON.stringify({ entry: "research", task: `task ${i}`, sessionId: `served-${i % 1000}` });
  const viaApp = async (i: number) => {
    const response = await app.request("/v1/agent/run", { method: "POST", headers: { "content-type": "application/json", "X-Agent-Policy": header }, body: body(i) });
    await response.json();
  };
  const server = await serve({ app, port: 0 });
  const viaSocket = async (i: number) => {
    const response = await fetch(`${server.url}/v1/agent/run`, { method: "POST", headers: { "content-type": "application/json", "X-Agent-Policy": header }, body: body(i) });
    await response.json();
  };

  const rows: string[][] = [["path", "p50 µs", "p99 µs", "added p50 µs", "added p99 µs", `req/s (${PARALLEL} in parallel)`]];
  const base = await latencies(direct, SEQUENTIAL);
  const baseRps = await throughput(direct, CONCURRENT);
  rows.push(["agent in-process (withReachBudget)", percentile(base, 50).toFixed(0), percentile(base, 99).toFixed(0), "-", "-", baseRps.toFixed(0)]);
  for (const [name, call] of [
    ["server, app.request (in-process fetch)", viaApp],
    ["server, real socket 127.0.0.1", viaSocket],
  ] as const) {
    const times = await latencies(call, SEQUENTIAL);
    const rps = await throughput(call, CONCURRENT);
    rows.push([
      name,
      percentile(times, 50).toFixed(0),
      percentile(times, 99).toFixed(0),
      (percentile(times, 50) - percentile(base, 50)).toFixed(0),
      (percentile(times, 99) - percentile(base, 99)).toFixed(0),
      rps.toFixed(0),
    ]);
  }
  await server.close();
  console.log(`@rein/server: one scripted run (1 model request, session recorded, reach budget), ${SEQUENTIAL} sequential calls per path, ${CONCURRENT} for req/s`);
  printTable(rows);
}

if (require.main === module) void benchServer();
