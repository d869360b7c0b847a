/**
 * Opening and closing a SQLite session store, many times on one file, in a
 * child process limited to 64 descriptors (`ulimit -n 64`): the cost of one
 * open/commit/close cycle (min/median/max over the cycles), and the
 * descriptors after each close — on the file (must be 0) and in the whole
 * process (must not grow). The test
 * (`session-store-faults.test.ts`, "20 open/close cycles") proves the
 * behaviour with 20 cycles; this runs the volume (300 by default).
 *
 *   pnpm exec tsx --tsconfig tsconfig.test.json bench/session-store-open-close.ts [cycles]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
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

if (require.main === module) benchSessionStoreOpenClose(Number(process.argv[2] ?? 300));
