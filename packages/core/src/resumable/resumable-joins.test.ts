/**
 * Resumable runs where code changes meet resumes (found by an attack
 * review, 2026-12-03; each failed before): an unfinished step replaced
 * under use_latest, two listed helpers sharing a name.
 */
import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import { InterruptedError } from "@rein/guard";
import { InMemorySessionStore } from "@rein/session";
import { step } from "./step";
import { recordedSteps } from "./__fixtures__/recorded-steps";
import { RunPausedError } from "./resumable-errors";

const steps = recordedSteps();
const { calls, work } = steps;
const one = work("one", (n) => n + 1);
const two = work("two", (n) => n * 2);
const three = work("three", (n) => n - 3);
const threeFixed = work("threeFixed", (n) => n - 30);
const four = work("four", (n) => n * 100);

// Version A: interrupted inside its unfinished step "three".
const JobA = class Job extends Agent {
  static methodOptions = { run: { resumable: true } };
  async run(n: number): Promise<number> {
    const a = await step("one", one, n);
    const b = await step("two", two, a);
    return step("three", three, b);
  }
};
// Version B: the UNFINISHED step is replaced (renamed), a step is added. Finished steps one, two unchanged.
const JobB = class Job extends Agent {
  static methodOptions = { run: { resumable: true } };
  async run(n: number): Promise<number> {
    const a = await step("one", one, n);
    const b = await step("two", two, a);
    const c = await step("threeFixed", threeFixed, b);
    return step("four", four, c);
  }
};

test("use_latest replacing an unfinished step: the next resume of the same version runs only the step left, never a finished one, and completes", async () => {
  const store = new InMemorySessionStore();
  store.createSession("s");
  const context = Context.forSession(store, "s");
  steps.interruptAt = new Set(["three"]);
  await expect(new JobA({ context }).run(1)).rejects.toThrow("deploy");
  const runId = store.listRuns().at(-1)!.runId;

  // Resume on B with use_latest; interrupted again in B's last step.
  calls.length = 0;
  steps.interruptAt = new Set(["four"]);
  await expect(new JobB({ context }).resumeRun(runId, { codeChangePolicy: "use_latest" })).rejects.toThrow("deploy");
  expect(calls).toEqual(["threeFixed", "four"]);

  // Same version B again (adopted), nothing changed: only "four" should run, result (4-30)*100.
  calls.length = 0;
  const result = await new JobB({ context }).resumeRun(runId).catch((e: unknown) => e);
  expect(String(result)).not.toContain("RunPausedError");
  expect(calls).toEqual(["four"]); // finished "threeFixed" must not run again
  expect(result).toBe(-2600);
});


// Two helper modules each export a function named `format` (a common name).
const taxV1 = { format: (n: number) => `${n} EUR` };
const taxV2 = { format: (n: number) => `${n * 1.2} EUR` }; // changed
const label = { format: (s: string) => `<${s}>` };
let interrupt = true;
let tax = taxV1;

function versionOf(taxHelpers: typeof taxV1) {
  return class Job extends Agent {
    static methodOptions = { run: { resumable: { helpers: [taxHelpers.format, label.format] } } };
    async run(n: number): Promise<string> {
      const a = await step("price", async (v: number) => tax.format(v), n);
      return step("label", async (s: string) => {
        if (interrupt) { interrupt = false; throw new InterruptedError("deploy"); }
        return label.format(s);
      }, a);
    }
  };
}

test("keep_original notices a changed helper when two listed helpers share a name", async () => {
  const store = new InMemorySessionStore();
  store.createSession("s");
  const context = Context.forSession(store, "s");
  const V1 = versionOf(taxV1);
  await expect(new V1({ context }).run(10)).rejects.toThrow("deploy");
  const runId = store.listRuns().at(-1)!.runId;
  tax = taxV2;
  const V2 = versionOf(taxV2); // the first listed helper's source changed
  const outcome = await new V2({ context }).resumeRun(runId).catch((e: unknown) => e);
  expect(RunPausedError.isInstance(outcome)).toBe(true); // keep_original: must pause with kind "code-changed"
});
