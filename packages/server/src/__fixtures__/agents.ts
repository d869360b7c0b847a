import { Agent, ProviderError, Runtime, ScriptedProvider, currentSignal, step, type ModelRequest } from "rein";
import type { Entries, EntryInit } from "../entries";

/** The first `task-…` marker a request carries: a scripted model that answers about what it was asked. */
export function markerOf(request: ModelRequest): string {
  return /task-[A-Za-z0-9-]+/.exec(JSON.stringify(request.messages))?.[0] ?? "none";
}

/** A class entry: its static runtime answers every request. */
export class Researcher extends Agent {
  static runtime = new Runtime({ provider: new ScriptedProvider([(request) => `answer about ${markerOf(request)}`], { whenExhausted: "repeat-last" }) });
  async research(task: string): Promise<string> {
    return this.ask(task);
  }
  add(a: number, b: number): number {
    return a + b;
  }
}

/** A factory entry: its runtime reports events to the server, with usage. */
export function researcherFactory({ onEvent }: EntryInit): Researcher {
  const provider = new ScriptedProvider([(request) => ({ text: `answer about ${markerOf(request)}`, usage: { inputTokens: 7, outputTokens: 3 } })], {
    whenExhausted: "repeat-last",
    recordRequests: false,
  });
  return new Researcher({ runtime: new Runtime({ provider, onEvent }) });
}

/** Waits `ms` or until its run is cancelled. */
export class Sleeper extends Agent {
  signal: AbortSignal | undefined;
  async sleep(ms: number): Promise<string> {
    const signal = this.signal ?? currentSignal();
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, typeof ms === "number" ? ms : 10_000);
      signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve(undefined);
      });
    });
    return "woke";
  }
}

/** A factory entry handing the run's signal to a {@link Sleeper}. */
export function sleeperFactory({ signal }: EntryInit): Sleeper {
  const sleeper = new Sleeper();
  sleeper.signal = signal;
  return sleeper;
}

/** A model that always fails: the provider error path. */
export function brokenFactory({ onEvent }: EntryInit): Researcher {
  const provider = new ScriptedProvider([new ProviderError("upstream model unavailable", { provider: "scripted", status: 503 })], { whenExhausted: "repeat-last" });
  return new Researcher({ runtime: new Runtime({ provider, onEvent }) });
}

/** A method that throws an ordinary error. */
export class Thrower extends Agent {
  fail(): never {
    throw new Error("the entry failed");
  }
}

/** An agent another agent's method enters: one more level of logic depth. */
export class Inner extends Agent {
  inner(): string {
    return "inner";
  }
}

/** Enters {@link Inner}: needs a budget of depth 2. */
export class Nester extends Agent {
  outer(): string {
    return new Inner().inner();
  }
}

/** The entries of the tests. */
export const entries = {
  research: [Researcher, "research"],
  add: [Researcher, "add"],
  stream: [researcherFactory, "research"],
  sleep: [sleeperFactory, "sleep"],
  nap: [Sleeper, "sleep"],
  broken: [brokenFactory, "research"],
  fail: [Thrower, "fail"],
  nest: [Nester, "outer"],
} satisfies Entries;

/** What {@link Pipeline}'s steps did, in order (reset by tests). */
export const pipelineCalls: string[] = [];
/** Set to make the pipeline's second step throw once. */
export const pipelineFaults = { failSecondOnce: false, waitForCancel: false };

/** A resumable entry: two recorded steps. */
export class Pipeline extends Agent {
  static methodOptions = { process: { resumable: true } };
  async process(text: string): Promise<string> {
    const upper = await step("upper", async (value: string) => (pipelineCalls.push("upper"), value.toUpperCase()), text);
    return step("exclaim", async (value: string) => {
      pipelineCalls.push("exclaim");
      // A worker that dies mid-step (resume-runs.test.ts kills the process while this waits).
      if (process.env["PIPELINE_HANG"] === "1") await new Promise<never>(() => undefined);
      if (pipelineFaults.waitForCancel) {
        const signal = currentSignal();
        if (signal !== undefined && !signal.aborted) await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
        signal?.throwIfAborted();
      }
      if (pipelineFaults.failSecondOnce) {
        pipelineFaults.failSecondOnce = false;
        throw new Error("the second step failed once");
      }
      return `${value}!`;
    }, upper);
  }
}

/** The entries of the resumable-run tests: the pipeline beside a plain one. */
export const resumableEntries = { pipeline: [Pipeline, "process"], research: [Researcher, "research"] } satisfies Entries;
