/**
 * Cost of a scoped Agent method call (no store) against a plain method call
 * and a bare AsyncLocalStorage.run, sync and async, in one run.
 *
 * Target: a scoped call within 3× a bare AsyncLocalStorage.run.
 * Run: pnpm bench (or pnpm exec tsx --tsconfig tsconfig.test.json bench/scoped-call.ts)
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { Agent } from "@rein/core";
import { measureAsync, measureSync, ns, printTable } from "./measure";

const SYNC_ITERATIONS = 300_000;
const ASYNC_ITERATIONS = 100_000;

let sink = 0;
class Plain {
  step(): number {
    return ++sink;
  }
  async stepAsync(): Promise<number> {
    return ++sink;
  }
}
class Scoped extends Agent {
  step(): number {
    return ++sink;
  }
  async stepAsync(): Promise<number> {
    return ++sink;
  }
}

const als = new AsyncLocalStorage<{ value: number }>();
function work(): number {
  return ++sink;
}
async function asyncWork(): Promise<number> {
  return ++sink;
}

export async function benchScopedCall(): Promise<{ syncRatio: number; asyncRatio: number }> {
  console.log("\n== scoped Agent method call (no store) vs plain call vs AsyncLocalStorage.run ==");
  const plain = new Plain();
  const scoped = new Scoped();
  // Steady state: both storages in use, as in any Rein process (see guard-overhead.ts).
  for (let i = 0; i < 200_000; i++) {
    als.run({ value: i }, work);
    scoped.step();
  }
  const plainSync = measureSync(() => plain.step(), SYNC_ITERATIONS);
  const alsSync = measureSync(() => als.run({ value: 1 }, work), SYNC_ITERATIONS);
  const scopedSync = measureSync(() => scoped.step(), SYNC_ITERATIONS);
  const plainAsync = await measureAsync(() => plain.stepAsync(), ASYNC_ITERATIONS);
  const alsAsync = await measureAsync(() => als.run({ value: 1 }, asyncWork), ASYNC_ITERATIONS);
  const scopedAsync = await measureAsync(() => scoped.stepAsync(), ASYNC_ITERATIONS);

  printTable([
    ["call", "sync", "× ALS.run", "× plain", "async", "× ALS.run", "× plain"],
    ["plain method", ns(plainSync), "", "", ns(plainAsync), "", ""],
    ["AsyncLocalStorage.run", ns(alsSync), "1.00", (alsSync / plainSync).toFixed(2), ns(alsAsync), "1.00", (alsAsync / plainAsync).toFixed(2)],
    [
      "scoped Agent method",
      ns(scopedSync),
      (scopedSync / alsSync).toFixed(2),
      (scopedSync / plainSync).toFixed(2),
      ns(scopedAsync),
      (scopedAsync / alsAsync).toFixed(2),
      (scopedAsync / plainAsync).toFixed(2),
    ],
  ]);
  const syncRatio = scopedSync / alsSync;
  const asyncRatio = scopedAsync / alsAsync;
  const verdict = (ratio: number) => (ratio <= 3 ? "met" : "NOT met");
  console.log(
    `target: scoped call within 3× ALS.run — sync ${syncRatio.toFixed(2)}× (${verdict(syncRatio)}), async ${asyncRatio.toFixed(2)}× (${verdict(asyncRatio)})`,
  );
  return { syncRatio, asyncRatio };
}

if (require.main === module) void benchScopedCall();
