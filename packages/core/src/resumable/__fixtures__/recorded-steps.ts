import { InterruptedError } from "@rein/guard";

/** A test's step functions and what they did: each call is recorded; a name in `interruptAt` or `failAt` fails once. */
export interface RecordedSteps {
  /** The names of the steps run, in order. */
  readonly calls: string[];
  /** Steps that throw `InterruptedError("deploy")` once (a deploy stopping the process). */
  interruptAt: Set<string>;
  /** Steps that throw `Error("boom")` once. */
  failAt: Set<string>;
  /** A step function named `name` that records its run and answers `transform(n)`. */
  work(name: string, transform: (n: number) => number): (n: number) => Promise<number>;
}

/** Step functions for resumable-run tests that record their calls and fail where asked. */
export function recordedSteps(): RecordedSteps {
  const steps: RecordedSteps = {
    calls: [],
    interruptAt: new Set(),
    failAt: new Set(),
    work: (name, transform) => async (n) => {
      steps.calls.push(name);
      if (steps.interruptAt.delete(name)) throw new InterruptedError("deploy");
      if (steps.failAt.delete(name)) throw new Error("boom");
      return transform(n);
    },
  };
  return steps;
}
