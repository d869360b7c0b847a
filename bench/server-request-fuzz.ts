/**
 * The in-process request fuzz of fuzz.test.ts at its former volume: per
 * round, 10,000 random POST /v1/agent/run requests (X-Agent-Policy headers,
 * bodies, Accept) and 2,000 random resume + list pairs on the runs routes,
 * sent through `app.request` (packages/server/src/__fixtures__/request-fuzz.ts
 * holds the generators the test uses). fuzz.test.ts sends 2,000 and 500 per
 * `pnpm test`, new ones each time.
 *
 * Prints per round: requests, the status histogram, the answers that broke
 * the contract (a 5xx, a status outside 200/4xx, a 4xx without a typed JSON
 * error) and the wall time; then min/median/max of the wall times. Exits 1
 * when any round broke the contract. Each round uses a different seed.
 *
 *   pnpm exec tsx --tsconfig tsconfig.test.json bench/server-request-fuzz.ts
 *   (FUZZ_RUN_REQUESTS, FUZZ_RUNS_ROUTE_REQUESTS, FUZZ_ROUNDS override 10000, 2000 and 5)
 */
import fc from "fast-check";
import { policyHeader, requestFuzzApp, resumeBody, runAccept, runBody, runId, stateFilter } from "../packages/server/src/__fixtures__/request-fuzz";
import { minMedianMax, printTable } from "./measure";

const RUN_REQUESTS = Number(process.env["FUZZ_RUN_REQUESTS"] ?? 10_000);
const RUNS_ROUTE_REQUESTS = Number(process.env["FUZZ_RUNS_ROUTE_REQUESTS"] ?? 2_000);
const ROUNDS = Number(process.env["FUZZ_ROUNDS"] ?? 5);

/** What is wrong with an answer, or undefined: the contract is 200, or a 4xx whose JSON names an error type and message. */
async function brokenContract(response: Response): Promise<string | undefined> {
  if (response.status === 200) {
    await response.text();
    return undefined;
  }
  if (response.status < 400 || response.status >= 500) return `status ${response.status}`;
  const text = await response.text();
  try {
    const { error } = JSON.parse(text) as { error?: { type?: unknown; message?: unknown } };
    if (typeof error?.type === "string" && typeof error.message === "string") return undefined;
  } catch {
    // reported below
  }
  return `status ${response.status} without a typed error: ${text.slice(0, 200)}`;
}

export async function benchServerRequestFuzz(): Promise<void> {
  // Unsigned X-Agent-Policy headers, as the test runs them.
  delete process.env["REIN_POLICY_SECRET"];
  const app = requestFuzzApp();
  const rows: string[][] = [["round", "run requests", "runs-route requests", "contract broken", "wall s", "statuses"]];
  const walls: number[] = [];
  let failures = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const runs = fc.sample(fc.tuple(policyHeader, runBody, runAccept), { numRuns: RUN_REQUESTS, seed: round });
    const routes = fc.sample(fc.tuple(runId, resumeBody, policyHeader, stateFilter), { numRuns: RUNS_ROUTE_REQUESTS, seed: round });
    const statuses = new Map<number, number>();
    const broken: string[] = [];
    const check = async (response: Response, what: string): Promise<void> => {
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      const problem = await brokenContract(response);
      if (problem !== undefined) broken.push(`${what}: ${problem}`);
    };
    const began = process.hrtime.bigint();
    for (const [policy, payload, accept] of runs) {
      const headers: Record<string, string> = { "content-type": "application/json", accept };
      if (policy !== undefined) headers["X-Agent-Policy"] = policy;
      await check(await app.request("/v1/agent/run", { method: "POST", headers, body: payload }), `run ${payload.slice(0, 100)}`);
    }
    for (const [id, payload, policy, filter] of routes) {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (policy !== undefined) headers["X-Agent-Policy"] = policy;
      await check(await app.request(`/v1/runs/${id}/resume`, { method: "POST", headers, body: payload }), `resume ${id}`);
      await check(await app.request(filter === undefined ? "/v1/runs" : `/v1/runs?state=${encodeURIComponent(filter)}`), `list ${filter}`);
    }
    const wall = Number(process.hrtime.bigint() - began) / 1e9;
    walls.push(wall);
    if (broken.length > 0) failures++;
    const histogram = [...statuses.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, count]) => `${status}:${count}`)
      .join(" ");
    rows.push([String(round), String(runs.length), String(routes.length * 2), String(broken.length), wall.toFixed(1), histogram]);
    for (const problem of broken.slice(0, 5)) console.log(`  round ${round}: ${problem}`);
  }
  console.log(`\nIn-process request fuzz: ${RUN_REQUESTS} run requests and ${RUNS_ROUTE_REQUESTS} resume + list pairs per round, ${ROUNDS} rounds`);
  printTable(rows);
  const { min, median, max } = minMedianMax(walls);
  console.log(`\nwall s per round: min ${min.toFixed(1)} / median ${median.toFixed(1)} / max ${max.toFixed(1)}`);
  if (failures > 0) {
    console.log(`\n${failures} round(s) broke the contract`);
    process.exitCode = 1;
  }
}

if (require.main === module) void benchServerRequestFuzz();
