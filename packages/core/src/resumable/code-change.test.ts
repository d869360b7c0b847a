import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import { InterruptedError } from "@rein/guard";
import { InMemorySessionStore } from "@rein/session";
import type { SessionNode } from "@rein/session";
import { RunPausedError } from "./resumable-errors";
import { step } from "./step";

// Each class below is one version of the same resumable method `Job.run`
// (class expressions named Job): the code fingerprint is the method's source.

const calls: string[] = [];
let interruptAt = new Set<string>();

function work(name: string, transform: (n: number) => number): (n: number) => Promise<number> {
  return async (n: number) => {
    calls.push(name);
    if (interruptAt.delete(name)) throw new InterruptedError("deploy");
    return transform(n);
  };
}
const one = work("one", (n) => n + 1);
const two = work("two", (n) => n * 2);
const three = work("three", (n) => n - 3);
const four = work("four", (n) => n * 100);

const JobA = class Job extends Agent {
  static methodOptions = { run: { resumable: true } };
  async run(n: number): Promise<number> {
    const a = await step("one", one, n);
    const b = await step("two", two, a);
    return step("three", three, b);
  }
};

const JobB = class Job extends Agent {
  static methodOptions = { run: { resumable: true } };
  async run(n: number): Promise<number> {
    const a = await step("one", one, n);
    const b = await step("two", two, a);
    const c = await step("three", three, b);
    return step("four", four, c);
  }
};

const JobC = class Job extends Agent {
  static methodOptions = { run: { resumable: true } };
  async run(n: number): Promise<number> {
    const a = await step("one", one, n);
    const b = await step("two", two, a);
    const c = await step("three", three, b);
    return (await step("four", four, c)) + 1;
  }
};

const JobInputChanged = class Job extends Agent {
  static methodOptions = { run: { resumable: true } };
  async run(n: number): Promise<number> {
    const a = await step("one", one, n);
    const b = await step("two", two, a + 1);
    return step("three", three, b);
  }
};

const JobReordered = class Job extends Agent {
  static methodOptions = { run: { resumable: true } };
  async run(n: number): Promise<number> {
    const b = await step("two", two, n);
    const a = await step("one", one, b);
    return step("three", three, a);
  }
};

const JobRemoved = class Job extends Agent {
  static methodOptions = { run: { resumable: true } };
  async run(n: number): Promise<number> {
    const a = await step("one", one, n);
    return step("three", three, a * 2);
  }
};

const JobRemovedLast = class Job extends Agent {
  static methodOptions = { run: { resumable: true } };
  async run(n: number): Promise<number> {
    return step("one", one, n);
  }
};

function label(text: string): string {
  return `<${text}>`;
}
const JobHelper = class Job extends Agent {
  static methodOptions = { run: { resumable: { helpers: [label] } } };
  async run(n: number): Promise<string> {
    const a = await step("one", one, n);
    const b = await step("two", two, a);
    return step("three", async (v: number) => labeler(String(await three(v))), b);
  }
};
function labelV2(text: string): string {
  return `[${text}]`;
}
Object.defineProperty(labelV2, "name", { value: "label" });
// The method text of both versions is the same: only the listed helper differs.
let labeler = label;
const JobHelperV2 = class Job extends Agent {
  static methodOptions = { run: { resumable: { helpers: [labelV2] } } };
  async run(n: number): Promise<string> {
    const a = await step("one", one, n);
    const b = await step("two", two, a);
    return step("three", async (v: number) => labeler(String(await three(v))), b);
  }
};

type JobClass = new (options: { context: Context }) => Agent & { run(n: number): Promise<unknown> };

let store: InMemorySessionStore;
let context: Context;
beforeEach(() => {
  calls.length = 0;
  interruptAt = new Set();
  labeler = label;
  store = new InMemorySessionStore();
  store.createSession("s");
  context = Context.forSession(store, "s");
});

/** Starts `run(1)` with version `start`, interrupted by a deploy inside step `at`; returns the run id. */
async function interrupted(start: JobClass, at: string): Promise<string> {
  interruptAt = new Set([at]);
  await expect(new start({ context }).run(1)).rejects.toThrow("deploy");
  calls.length = 0;
  return store.listRuns().at(-1)!.runId;
}

function runNode(runId: string): SessionNode {
  return store.readNodes("s").find((node) => node.id === runId)!;
}

async function paused(promise: Promise<unknown>): Promise<RunPausedError> {
  const error = await promise.catch((caught: unknown) => caught);
  expect(RunPausedError.isInstance(error)).toBe(true);
  return error as RunPausedError;
}

describe("keep_original (the default)", () => {
  test("the same code loaded: the run continues", async () => {
    const runId = await interrupted(JobA, "three");
    expect(await new JobA({ context }).resumeRun(runId)).toBe(1);
    expect(calls).toEqual(["three"]);
  });

  test.each([
    ["changed step input", JobInputChanged],
    ["reordered steps", JobReordered],
    ["removed step", JobRemoved],
    ["an added step", JobB],
  ])("%s: the run stays paused, naming the function that changed", async (_, version) => {
    const runId = await interrupted(JobA, "three");
    const error = await paused(new version({ context }).resumeRun(runId));
    expect(error.kind).toBe("code-changed");
    expect(error.step).toBe("Job.run");
    expect(error.message).toContain("Job.run changed");
    expect(error.message).toContain('codeChangePolicy "keep_original"');
    expect(calls).toEqual([]);
    expect(runNode(runId).metadata["status"]).toBe("paused");
    expect(store.getRun(runId)).toMatchObject({ state: "paused", owned: false });
  });

  test("a changed helper pauses the run, naming the helper; a per-resume use_latest override continues with the new helper", async () => {
    const runId = await interrupted(JobHelper, "three");
    labeler = labelV2;
    const error = await paused(new JobHelperV2({ context }).resumeRun(runId));
    expect(error.message).toContain("helper label changed");
    expect(error.step).toBe("helper label");
    expect(await new JobHelperV2({ context }).resumeRun(runId, { codeChangePolicy: "use_latest" })).toBe("[1]");
    expect(calls).toEqual(["three"]);
  });
});

describe("use_latest", () => {
  test("finished results are kept and later steps run with the current code", async () => {
    const runId = await interrupted(JobA, "three");
    expect(await new JobB({ context }).resumeRun(runId, { codeChangePolicy: "use_latest" })).toBe(100);
    expect(calls).toEqual(["three", "four"]);
  });

  test("a changed helper alone continues", async () => {
    const runId = await interrupted(JobHelper, "three");
    labeler = labelV2;
    expect(await new JobHelperV2({ context }).resumeRun(runId, { codeChangePolicy: "use_latest" })).toBe("[1]");
    expect(calls).toEqual(["three"]);
  });

  test("changed input of a finished step: paused, naming the step", async () => {
    const runId = await interrupted(JobA, "three");
    const error = await paused(new JobInputChanged({ context }).resumeRun(runId, { codeChangePolicy: "use_latest" }));
    expect(error).toMatchObject({ kind: "incompatible", step: "two" });
    expect(error.message).toContain('the input of finished step "two" changed (saved [2], now [3])');
    expect(calls).toEqual([]);
    expect(runNode(runId).metadata).toMatchObject({ status: "paused", pause: { kind: "incompatible", step: "two" } });
  });

  test("reordered finished steps: paused, naming the first saved step out of place", async () => {
    const runId = await interrupted(JobA, "three");
    const error = await paused(new JobReordered({ context }).resumeRun(runId, { codeChangePolicy: "use_latest" }));
    expect(error).toMatchObject({ kind: "incompatible", step: "one" });
    expect(error.message).toContain('step "two" is called where the saved run finished "one"');
    expect(calls).toEqual([]);
  });

  test("a removed finished step: paused, naming it (in the middle, and at the end)", async () => {
    const runId = await interrupted(JobA, "three");
    const middle = await paused(new JobRemoved({ context }).resumeRun(runId, { codeChangePolicy: "use_latest" }));
    expect(middle).toMatchObject({ kind: "incompatible", step: "two" });
    const last = await paused(new JobRemovedLast({ context }).resumeRun(runId, { codeChangePolicy: "use_latest" }));
    expect(last).toMatchObject({ kind: "incompatible", step: "two" });
    expect(last.message).toContain('finished step "two" is no longer called');
    expect(runNode(runId).metadata["status"]).toBe("paused");
  });

  test("the policy can be the method's own (resumable.codeChangePolicy)", async () => {
    const Latest = class Job extends Agent {
      static methodOptions = { run: { resumable: { codeChangePolicy: "use_latest" as const } } };
      async run(n: number): Promise<number> {
        const a = await step("one", one, n);
        const b = await step("two", two, a);
        return (await step("three", three, b)) * 7;
      }
    };
    const runId = await interrupted(JobA, "three");
    expect(await new Latest({ context }).resumeRun(runId)).toBe(7);
    // …and a resume can still override it.
    const again = await interrupted(JobA, "three");
    await paused(new Latest({ context }).resumeRun(again, { codeChangePolicy: "keep_original" }));
  });
});

test("A → B → C: a run that adopted B continues under keep_original only where B is loaded", async () => {
  const runId = await interrupted(JobA, "three");
  const versionA = (runNode(runId).metadata["resumable"] as { fingerprint: string }).fingerprint;
  // B is adopted (use_latest), and the run is interrupted again in B's new step.
  interruptAt = new Set(["four"]);
  await expect(new JobB({ context }).resumeRun(runId, { codeChangePolicy: "use_latest" })).rejects.toThrow("deploy");
  const adopted = runNode(runId).metadata["resumable"] as { fingerprint: string; history: string[] };
  expect(adopted.history).toEqual([versionA, adopted.fingerprint]);
  const versionB = adopted.fingerprint;
  calls.length = 0;

  // C loaded, keep_original: paused — against B, the adopted version, not A.
  const error = await paused(new JobC({ context }).resumeRun(runId));
  expect(error.message).toContain(`the run's version ${versionB}`);
  // A loaded, keep_original: A is no longer the run's version either.
  await paused(new JobA({ context }).resumeRun(runId));
  expect(calls).toEqual([]);
  // B loaded again: it continues B, with B's finished steps kept.
  expect(await new JobB({ context }).resumeRun(runId)).toBe(100);
  expect(calls).toEqual(["four"]);
});

test("the agent's execution.codeChangePolicy (option or class default) applies where the method sets none; a resume overrides it", async () => {
  const runId = await interrupted(JobA, "three");
  await paused(new JobB({ context, execution: { codeChangePolicy: "keep_original" } }).resumeRun(runId));
  expect(await new JobB({ context, execution: { codeChangePolicy: "use_latest" } }).resumeRun(runId)).toBe(100);

  const LatestByDefault = class Job extends Agent {
    static execution = { codeChangePolicy: "use_latest" as const };
    static methodOptions = { run: { resumable: true } };
    async run(n: number): Promise<number> {
      const a = await step("one", one, n);
      const b = await step("two", two, a);
      return (await step("three", three, b)) + 1000;
    }
  };
  const again = await interrupted(JobA, "three");
  await paused(new LatestByDefault({ context }).resumeRun(again, { codeChangePolicy: "keep_original" }));
  expect(await new LatestByDefault({ context }).resumeRun(again)).toBe(1001);
  expect(() => new JobA({ context, execution: { codeChangePolicy: "newest" } as never })).toThrow(/execution\.codeChangePolicy/);
});
