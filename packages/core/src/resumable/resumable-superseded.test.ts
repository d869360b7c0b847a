/**
 * Unfinished steps the code no longer calls, met on resume (found by a
 * review of the first fix, 2026-12-03): one removed while finished steps
 * follow it is superseded and the finished step replayed, not re-run; a
 * superseded external step does not pause later automatic resumes.
 */
import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import { InMemorySessionStore } from "@rein/session";
import { step } from "./step";
import { recordedSteps } from "./__fixtures__/recorded-steps";
import { RunPausedError } from "./resumable-errors";
import { resumeInterrupted } from "./resume-run";

const steps = recordedSteps();
const { calls, work } = steps;
const flaky = work("flaky", (n) => n + 1);
const two = work("two", (n) => n * 2);
const three = work("three", (n) => n - 3);
const pay = work("pay", (n) => n);
const payV2 = work("payV2", (n) => n);
const ship = work("ship", (n) => n + 5);

function setup() {
  const store = new InMemorySessionStore();
  store.createSession("s");
  return { store, context: Context.forSession(store, "s") };
}

const RemoveV1 = class Job extends Agent {
  static methodOptions = { run: { resumable: true } };
  async run(n: number): Promise<number> {
    let a = n;
    try {
      a = await step("flaky", flaky, n);
    } catch {
      /* an optional step */
    }
    const b = await step("two", two, a);
    return step("three", three, b);
  }
};
const RemoveV2 = class Job extends Agent {
  static methodOptions = { run: { resumable: true } };
  async run(n: number): Promise<number> {
    const b = await step("two", two, n);
    return step("three", three, b);
  }
};

test("use_latest removing an unfinished step that finished steps follow: the finished step is replayed, not run again, and the run completes", async () => {
  const { store, context } = setup();
  steps.failAt = new Set(["flaky"]);
  steps.interruptAt = new Set(["three"]);
  calls.length = 0;
  await expect(new RemoveV1({ context }).run(1)).rejects.toThrow("deploy");
  expect(calls).toEqual(["flaky", "two", "three"]);
  const runId = store.listRuns().at(-1)!.runId;

  calls.length = 0;
  const first = await new RemoveV2({ context }).resumeRun(runId, { codeChangePolicy: "use_latest" }).catch((e: unknown) => e);
  // "two" finished (input 1, output 2) before: it is replayed, only "three" runs, and the run ends with 2 - 3.
  expect(RunPausedError.isInstance(first) ? (first as Error).message : first).toBe(-1);
  expect(calls).toEqual(["three"]);
});

const ExtV1 = class Job extends Agent {
  static methodOptions = { run: { resumable: true } };
  async run(n: number): Promise<number> {
    const a = await step({ name: "pay", external: true }, pay, n);
    return step("ship", ship, a);
  }
};
const ExtV2 = class Job extends Agent {
  static methodOptions = { run: { resumable: true } };
  async run(n: number): Promise<number> {
    const a = await step({ name: "payV2", external: true }, payV2, n);
    return step("ship", ship, a);
  }
};

test("a superseded external step does not make every later automatic resume pause for it", async () => {
  const { store, context } = setup();
  steps.interruptAt = new Set(["pay"]);
  calls.length = 0;
  await expect(new ExtV1({ context }).run(1)).rejects.toThrow("deploy");
  const runId = store.listRuns().at(-1)!.runId;
  // Someone checked the payment; the code replaced pay by payV2; resumed by hand, then interrupted in ship.
  steps.interruptAt = new Set(["ship"]);
  calls.length = 0;
  await expect(new ExtV2({ context }).resumeRun(runId, { codeChangePolicy: "use_latest" })).rejects.toThrow("deploy");
  expect(calls).toEqual(["payV2", "ship"]);
  const agent = new ExtV2({ context }); // an agent of the class must be live for resumeInterrupted
  const outcome = await resumeInterrupted({ store });
  expect(outcome.leftAlone.map((run) => `${run.reason}: ${run.message}`)).toEqual([]);
  void agent;
});
