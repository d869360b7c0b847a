/**
 * Resumable runs (issue 14), in one run:
 * - the cost of a recorded step (`await step("s", fn, i)` inside a
 *   resumable method: a code node written, its JSON input and result saved,
 *   and the writer committed before the run goes on) against the plain call
 *   `await fn(i)` in the same method, per step, recorded in an in-memory
 *   store and in a SQLite file store (WAL);
 * - the time `resumeRun` takes to finish a run that has 10,000 finished
 *   steps and one left: the run's nodes are read, every finished step
 *   answers from its saved result, the last one runs.
 * Each figure: warm-up rounds first, then min / median / max over the timed rounds.
 *
 * Run: pnpm exec tsx --tsconfig tsconfig.test.json bench/resumable.ts (also in pnpm bench)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, Context, InMemorySessionStore, InterruptedError, SessionStore, step, type SessionStoreLike } from "@rein/core";
import { minMedianMax, printTable } from "./measure";

const STEPS_PER_ROUND = 2_000;
const STEP_ROUNDS = 7;
const STEP_WARMUP = 3;
const FINISHED_STEPS = 10_000;
const RESUME_ROUNDS = 5;
const RESUME_WARMUP = 1;

let sink = 0;
async function increment(value: number): Promise<number> {
  sink += value;
  return value + 1;
}

let interruptLast = false;

class Bench extends Agent {
  static methodOptions = { recorded: { resumable: true }, plain: { resumable: true }, long: { resumable: true } };

  async recorded(count: number): Promise<number> {
    let value = 0;
    for (let index = 0; index < count; index++) value = await step("s", increment, value);
    return value;
  }

  async plain(count: number): Promise<number> {
    let value = 0;
    for (let index = 0; index < count; index++) value = await increment(value);
    return value;
  }

  async long(count: number): Promise<number> {
    let value = 0;
    for (let index = 0; index < count; index++) value = await step("s", increment, value);
    return step("last", async (v: number) => {
      if (interruptLast) throw new InterruptedError("bench interruption");
      return v;
    }, value);
  }
}

const format = (values: number[], unit: string, digits = 1): string => {
  const { min, median, max } = minMedianMax(values);
  return [min, median, max].map((value) => value.toFixed(digits)).join(" / ") + ` ${unit}`;
};

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start);
}

function newSession(store: SessionStoreLike, name: string): Bench {
  store.createSession(name);
  return new Bench({ context: Context.forSession(store, name) });
}

async function stepCost(store: SessionStoreLike, label: string): Promise<string[][]> {
  const recorded: number[] = [];
  const plain: number[] = [];
  for (let round = 0; round < STEP_WARMUP + STEP_ROUNDS; round++) {
    const agent = newSession(store, `${label}-steps-${round}`);
    // Interleaved, so both see the same machine state.
    const withSteps = await timed(() => agent.recorded(STEPS_PER_ROUND));
    const withCalls = await timed(() => agent.plain(STEPS_PER_ROUND));
    if (round < STEP_WARMUP) continue;
    recorded.push(withSteps / STEPS_PER_ROUND / 1000);
    plain.push(withCalls / STEPS_PER_ROUND / 1000);
  }
  const added = recorded.map((value, index) => value - plain[index]!);
  return [
    [`${label}: recorded step`, format(recorded, "µs/step", 2)],
    [`${label}: plain call`, format(plain, "µs/call", 3)],
    [`${label}: added by a step`, format(added, "µs/step", 2)],
  ];
}

async function resumeCost(store: SessionStoreLike, label: string): Promise<string[][]> {
  const times: number[] = [];
  const fresh: number[] = [];
  for (let round = 0; round < RESUME_WARMUP + RESUME_ROUNDS; round++) {
    const agent = newSession(store, `${label}-resume-${round}`);
    interruptLast = true;
    const first = await timed(() => agent.long(FINISHED_STEPS).catch(() => undefined));
    interruptLast = false;
    const runId = (store as unknown as { listRuns(): { runId: string }[] }).listRuns().at(-1)!.runId;
    const resumed = await timed(() => agent.resumeRun(runId));
    if (round < RESUME_WARMUP) continue;
    times.push(resumed / 1e6);
    fresh.push(first / 1e6);
  }
  return [
    [`${label}: first run, ${FINISHED_STEPS} steps`, format(fresh, "ms")],
    [`${label}: resumeRun with ${FINISHED_STEPS} finished steps`, format(times, "ms")],
  ];
}

export async function benchResumable(): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), "rein-bench-resumable-"));
  const memory = new InMemorySessionStore();
  const file = new SessionStore({ path: join(directory, "runs.db"), shutdownFlush: false });
  try {
    const rows: string[][] = [["resumable runs", "min / median / max"]];
    rows.push(...(await stepCost(memory, "in-memory")));
    rows.push(...(await stepCost(file, "sqlite file")));
    rows.push(...(await resumeCost(memory, "in-memory")));
    rows.push(...(await resumeCost(file, "sqlite file")));
    console.log(`\nResumable runs (${STEP_ROUNDS} rounds of ${STEPS_PER_ROUND} steps after ${STEP_WARMUP} warm-up; ${RESUME_ROUNDS} resumes after ${RESUME_WARMUP} warm-up)`);
    printTable(rows);
  } finally {
    file.close();
    memory.close();
    rmSync(directory, { recursive: true, force: true });
  }
  if (sink < 0) console.log(sink);
}

if (require.main === module) void benchResumable();
