/**
 * Entries for `rein worker` tests. With `REIN_TEST_HANG_MARKER` set, a run
 * writes that file (so the test knows the job is running in this process)
 * and never returns: the worker can then be killed mid-run.
 */
import { writeFileSync } from "node:fs";
import { Agent, Runtime, ScriptedProvider } from "rein";

export class Job extends Agent {
  static runtime = new Runtime({ provider: new ScriptedProvider(["unused"], { whenExhausted: "repeat-last" }) });
  async work(task: string): Promise<string> {
    const marker = process.env["REIN_TEST_HANG_MARKER"];
    if (marker !== undefined) {
      writeFileSync(marker, String(process.pid));
      await new Promise(() => undefined);
    }
    return `${task} done by ${process.pid}`;
  }
  /** One model request: held to a capped key's spend caps by the worker. */
  async answer(task: string): Promise<string> {
    return this.ask(task);
  }
}

export const entries = { work: [Job, "work"], answer: [Job, "answer"] } as const;
