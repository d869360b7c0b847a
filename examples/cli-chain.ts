/**
 * A small agent chain for `rein run`, on ScriptedProvider (no keys, no
 * network): `plan` nests two agents (logic depth 2) and takes a moment, so
 * the status line has something to show; `stall` runs a tool that blocks
 * the event loop (the status line shows `stalled`); `hang` runs a tool that
 * waits until the run is interrupted (Ctrl-C).
 *
 * Run:
 *   pnpm --filter @rein/cli build   # or, from source: node --require tsx/cjs packages/cli/src/bin.ts …
 *   rein run examples/cli-chain.ts#plan --task "Summarize recursion"
 *
 * `CLI_CHAIN_PAUSE_MS` (default 600) is how long the researcher works;
 * `CLI_CHAIN_BLOCK_MS` (default 1500) how long `stall`'s tool blocks.
 */
import { Agent, Runtime, ScriptedProvider } from "rein";

function envMs(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value >= 0 ? value : fallback;
}

const delay = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/** The researcher: gathers notes on the task (one scripted model request). */
export class Researcher extends Agent {
  static instructions = "Collect the key facts about the topic in one sentence.";
  static runtime = new Runtime({
    provider: new ScriptedProvider(["Notes: recursion defines something in terms of itself and stops at a base case."], {
      modelId: "scripted-researcher",
      whenExhausted: "repeat-last",
    }),
  });

  /** Works for `CLI_CHAIN_PAUSE_MS`, then asks the model for notes. */
  async research(topic: string): Promise<string> {
    await delay(envMs("CLI_CHAIN_PAUSE_MS", 600));
    return this.ask(`Research: ${topic}`);
  }
}

/** The planner: the entry of the chain; hands the topic to a {@link Researcher} and writes the answer. */
export class Planner extends Agent {
  static instructions = "Write a two-sentence answer from the notes.";
  static runtime = new Runtime({
    provider: new ScriptedProvider(["Recursion is a function calling itself on a smaller input until it reaches a base case."], {
      modelId: "scripted-planner",
      whenExhausted: "repeat-last",
    }),
  });

  /** The `plan` entry: research, then answer. */
  async plan(task: string): Promise<string> {
    const notes = await new Researcher().research(task);
    return this.ask(`Task: ${task}\n${notes}`);
  }
}

/** An agent whose model calls a tool that blocks the event loop for `CLI_CHAIN_BLOCK_MS`. */
export class Cruncher extends Agent {
  static runtime = new Runtime({
    provider: new ScriptedProvider([{ text: "Crunching.", toolCalls: [{ name: "crunch", input: {} }] }, "Crunched."], { modelId: "scripted-cruncher" }),
  });
  static methodOptions = { crunch: { tool: true, description: "Crunch numbers (synchronously).", parameters: { type: "object", properties: {} } } };

  /** The `stall` entry. */
  async work(task: string): Promise<string> {
    return this.ask(task);
  }

  /** Blocks the whole process: no timer, no socket answer, until it returns. */
  crunch(): string {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, envMs("CLI_CHAIN_BLOCK_MS", 1500));
    return "42";
  }
}

/** An agent whose model calls a tool that never returns by itself. */
export class Waiter extends Agent {
  static runtime = new Runtime({
    provider: new ScriptedProvider([{ text: "Waiting.", toolCalls: [{ name: "wait_for_signal", input: {} }] }, "Done."], { modelId: "scripted-waiter" }),
  });
  static methodOptions = { wait_for_signal: { tool: true, description: "Wait for a signal.", parameters: { type: "object", properties: {} } } };

  /** The `hang` entry. */
  async wait(task: string): Promise<string> {
    return this.ask(task);
  }

  /** Pending until the process is interrupted. */
  wait_for_signal(): Promise<string> {
    return new Promise(() => undefined);
  }
}

/** The entries `rein run examples/cli-chain.ts#<name>` can call. */
export const entries = {
  plan: [Planner, "plan"],
  stall: [Cruncher, "work"],
  hang: [Waiter, "wait"],
} as const;
