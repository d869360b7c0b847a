/**
 * A socket fuzz of `rein serve`'s server (createServer + serve with auth on,
 * two API keys, a SQLite session store) in its own process: 10,000 random
 * requests per round over raw TCP connections, 16 at a time — both keys, no
 * key, a wrong or malformed key; clients hanging up mid-body, mid-answer
 * and mid-SSE; chunked and declared bodies over the 16 KB limit (up to
 * 4 MB); bodies sent slowly or never finished; broken request heads and
 * raw garbage (packages/server/src/__fixtures__/socket-fuzz-plans.ts).
 *
 * Prints per round: requests, the status histogram (`closed` = the
 * connection ended with no response), the 5xx count, requests still open
 * after 30 s, whether the server process was still alive, and its RSS at
 * start (listening, before any request), peak (VmHWM) and end (after the
 * last run ended); then min/median/max of the RSS figures over the rounds.
 * Each round is a fresh server process and a different seed.
 *
 *   pnpm exec tsx --tsconfig tsconfig.test.json bench/server-fuzz.ts
 *   (FUZZ_REQUESTS, FUZZ_ROUNDS override 10000 and 5)
 */
import { samplePlans } from "../packages/server/src/__fixtures__/socket-fuzz-plans";
import { rssOf, runFuzz, startFuzzServer } from "../packages/server/src/__fixtures__/socket-fuzz";
import { minMedianMax, printTable } from "./measure";

const REQUESTS = Number(process.env["FUZZ_REQUESTS"] ?? 10_000);
const ROUNDS = Number(process.env["FUZZ_ROUNDS"] ?? 5);
const CONCURRENCY = 16;
const MB = 1024 * 1024;

async function untilIdle(url: string): Promise<void> {
  for (;;) {
    const { runs } = (await (await fetch(`${url}/healthz`)).json()) as { runs: number };
    if (runs === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function benchServerFuzz(): Promise<void> {
  const rows: string[][] = [["round", "requests", "5xx", "hung", "alive", "RSS start MB", "RSS peak MB", "RSS end MB", "wall s", "statuses"]];
  const starts: number[] = [];
  const peaks: number[] = [];
  const ends: number[] = [];
  let failures = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const server = await startFuzzServer();
    try {
      const pid = server.child.pid!;
      const start = rssOf(pid).rss;
      const began = process.hrtime.bigint();
      const report = await runFuzz(server, samplePlans(REQUESTS, round), { concurrency: CONCURRENCY });
      const wall = Number(process.hrtime.bigint() - began) / 1e9;
      const alive = server.child.exitCode === null && server.child.signalCode === null;
      if (alive) await untilIdle(server.url);
      const { rss: end, peak } = alive ? rssOf(pid) : { rss: NaN, peak: NaN };
      starts.push(start);
      peaks.push(peak);
      ends.push(end);
      if (report.serverErrors.length > 0 || report.hung.length > 0 || !alive) failures++;
      const statuses = Object.entries(report.statuses)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([status, count]) => `${status}:${count}`)
        .join(" ");
      rows.push([String(round), String(report.requests), String(report.serverErrors.length), String(report.hung.length), alive ? "yes" : "NO", (start / MB).toFixed(1), (peak / MB).toFixed(1), (end / MB).toFixed(1), wall.toFixed(1), statuses]);
      for (const outcome of [...report.serverErrors, ...report.hung].slice(0, 5)) console.log(`  round ${round}: ${JSON.stringify(outcome.plan).slice(0, 300)} -> ${outcome.statuses.join(",") || (outcome.hung ? "hung" : "closed")}`);
      if (!alive) console.log(`  round ${round}: the server exited: ${server.stderr().slice(-2_000)}`);
    } finally {
      await server.stop();
    }
  }
  console.log(`\nSocket fuzz: ${REQUESTS} random requests per round, ${CONCURRENCY} at a time, ${ROUNDS} rounds (a fresh server process each)`);
  printTable(rows);
  const mb = (values: number[]) => {
    const { min, median, max } = minMedianMax(values);
    return [(min / MB).toFixed(1), (median / MB).toFixed(1), (max / MB).toFixed(1)];
  };
  console.log("");
  printTable([["server RSS (MB)", "min", "median", "max"], ["start", ...mb(starts)], ["peak (VmHWM)", ...mb(peaks)], ["end", ...mb(ends)]]);
  if (failures > 0) {
    console.log(`\n${failures} round(s) had a 5xx, a hung request or a crash`);
    process.exitCode = 1;
  }
}

if (require.main === module) void benchServerFuzz();
