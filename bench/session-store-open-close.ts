/**
 * Opening and closing a SQLite session store, many times on one file, in a
 * child process limited to 64 descriptors (`ulimit -n 64`): the cost of one
 * open/commit/close cycle (min/median/max over the cycles), and the
 * descriptors after each close — on the file (must be 0) and in the whole
 * process (must not grow). The test
 * (`session-store-faults.test.ts`, "20 open/close cycles") proves the
 * behaviour with 20 cycles; this runs the volume (300 by default). Then the
 * CPU one cycle costs in this process (`process.cpuUsage()`, after a warm-up):
 * a closed store's worker thread serves the next store
 * (`sqlite-worker-pool.ts`), so a cycle starts no thread.
 *
 *   pnpm exec tsx --tsconfig tsconfig.test.json bench/session-store-open-close.ts [cycles]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { SessionStore } from "@rein/session";
import { minMedianMax } from "./measure";

const ROOT = resolve(__dirname, "..");
const CHILD = join(ROOT, "packages/session/src/__fixtures__/session-store-child.ts");

/** Runs `cycles` open/commit/close cycles in a child under `ulimit -n 64` and prints what it saw. */
export function benchSessionStoreOpenClose(cycles = 300): void {
  const directory = mkdtempSync(join(tmpdir(), "rein-open-close-"));
  try {
    const started = process.hrtime.bigint();
    const child = spawnSync(
      "sh",
      ["-c", 'ulimit -n 64 && exec "$@"', "sh", process.execPath, "--require", require.resolve("tsx/cjs"), CHILD, "cycles", join(directory, "sessions.db"), String(cycles)],
      { cwd: ROOT, env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, "tsconfig.test.json") }, encoding: "utf8" },
    );
    const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
    if (child.status !== 0) throw new Error(`the cycles child failed (${child.status}): ${child.stderr}`);
    const lines = child.stdout.trim().split("\n");
    const onFile = lines.map((line) => Number(line.split(" ")[1]));
    const all = lines.map((line) => Number(line.split(" ")[2]));
    const leaked = onFile.filter((count) => count !== 0).length;
    const { min, median, max } = minMedianMax(all);
    console.log(`session store open/commit/close, ${lines.length} cycles under ulimit -n 64 (one child, tsx start-up included):`);
    console.log(`  wall ${wallMs.toFixed(0)} ms, ${(wallMs / lines.length).toFixed(1)} ms per cycle`);
    console.log(`  cycles that left a descriptor on the file: ${leaked} (must be 0)`);
    console.log(`  descriptors of the whole process after each close: min ${min}, median ${median}, max ${max}; first ${all[0]}, last ${all.at(-1)} (must not grow)`);
    if (leaked > 0 || all.at(-1)! > all[0]!) process.exitCode = 1;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** CPU of one open/create/close cycle in this process: min/median/max over `rounds` rounds of `cycles` each. */
export function benchSessionStoreOpenCpu(rounds = 5, cycles = 40): void {
  const directory = mkdtempSync(join(tmpdir(), "rein-open-cpu-"));
  try {
    const cycle = (name: string): void => {
      const store = new SessionStore({ path: join(directory, `${name}.db`), shutdownFlush: false });
      store.createSession("s");
      store.close();
    };
    for (let warm = 0; warm < 10; warm++) cycle(`warm${warm}`);
    const perCycle: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const before = process.cpuUsage();
      for (let index = 0; index < cycles; index++) cycle(`r${round}-${index}`);
      const used = process.cpuUsage(before);
      perCycle.push((used.user + used.system) / 1000 / cycles);
    }
    const { min, median, max } = minMedianMax(perCycle);
    console.log(`session store open/createSession/close in one process, CPU per cycle (${rounds} rounds of ${cycles}): min ${min.toFixed(1)} / median ${median.toFixed(1)} / max ${max.toFixed(1)} ms`);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

if (require.main === module) {
  benchSessionStoreOpenClose(Number(process.argv[2] ?? 300));
  benchSessionStoreOpenCpu();
}
