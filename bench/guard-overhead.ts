/**
 * Cost of runInFrame relative to a bare AsyncLocalStorage.run and to a plain
 * call, for sync and async functions, at chain depths 1, 5 and 25, all
 * measured in this one process run.
 *
 * Target: runInFrame at depth 5 within 2× a bare AsyncLocalStorage.run.
 * Run: pnpm bench (or pnpm exec tsx --tsconfig tsconfig.test.json bench/guard-overhead.ts)
 */
import { AsyncLocalStorage } from "node:async_hooks";
import * as guard from "@rein/guard";
import type { Frame } from "@rein/guard";
import { measureAsync, measureSync, ns, printTable } from "./measure";

const SYNC_ITERATIONS = 300_000;
const ASYNC_ITERATIONS = 100_000;

// Held in a const, as a hot caller would: a re-exported binding is a getter
// (tsc's __createBinding, esbuild's __export), which costs more than the call.
const runInFrame = guard.runInFrame;
const als = new AsyncLocalStorage<{ value: number }>();
const measured: Frame = { key: "bench:measured", name: "measured", kind: "agent" };
const outer = Array.from({ length: 24 }, (_, i): Frame => ({ key: `bench:outer${i}`, name: `outer${i}`, kind: "agent" }));

let sink = 0;
function work(): number {
  return ++sink;
}
async function asyncWork(): Promise<number> {
  return ++sink;
}

/** Runs `body` with `depth` frames already on the chain. */
function atDepth<T>(depth: number, body: () => T): T {
  const nest = (i: number): T => (i === depth ? body() : runInFrame(outer[i], () => nest(i + 1)));
  return nest(0);
}

export async function benchGuardOverhead(): Promise<{ syncRatio: number; asyncRatio: number }> {
  console.log("\n== guard overhead: runInFrame vs AsyncLocalStorage.run vs plain call ==");
  // Warm both up first: while only one AsyncLocalStorage has ever run, V8
  // keeps a faster monomorphic path that no real process (Rein's own storage
  // beside the application's) stays on. Measure the steady state instead.
  for (let i = 0; i < 200_000; i++) {
    als.run({ value: i }, work);
    runInFrame(measured, work);
  }
  const plainSync = measureSync(() => work(), SYNC_ITERATIONS);
  const alsSync = measureSync(() => als.run({ value: 1 }, work), SYNC_ITERATIONS);
  const plainAsync = await measureAsync(() => asyncWork(), ASYNC_ITERATIONS);
  const alsAsync = await measureAsync(() => als.run({ value: 1 }, asyncWork), ASYNC_ITERATIONS);

  const rows = [["call", "depth", "sync", "× ALS.run", "× plain", "async", "× ALS.run", "× plain"]];
  rows.push(["plain call", "-", ns(plainSync), "", "", ns(plainAsync), "", ""]);
  rows.push(["AsyncLocalStorage.run", "-", ns(alsSync), "1.00", (alsSync / plainSync).toFixed(2), ns(alsAsync), "1.00", (alsAsync / plainAsync).toFixed(2)]);
  const ratios: Record<number, [number, number]> = {};
  for (const depth of [1, 5, 25]) {
    const sync = atDepth(depth - 1, () => measureSync(() => runInFrame(measured, work), SYNC_ITERATIONS));
    const async = await atDepth(depth - 1, () =>
      measureAsync(() => runInFrame(measured, asyncWork), ASYNC_ITERATIONS),
    );
    ratios[depth] = [sync / alsSync, async / alsAsync];
    rows.push([
      "runInFrame",
      String(depth),
      ns(sync),
      (sync / alsSync).toFixed(2),
      (sync / plainSync).toFixed(2),
      ns(async),
      (async / alsAsync).toFixed(2),
      (async / plainAsync).toFixed(2),
    ]);
  }
  printTable(rows);
  const [syncRatio, asyncRatio] = ratios[5];
  const verdict = (ratio: number) => (ratio <= 2 ? "met" : "NOT met");
  console.log(
    `target: runInFrame at depth 5 within 2× ALS.run — sync ${syncRatio.toFixed(2)}× (${verdict(syncRatio)}), async ${asyncRatio.toFixed(2)}× (${verdict(asyncRatio)})`,
  );
  return { syncRatio, asyncRatio };
}

if (require.main === module) void benchGuardOverhead();
