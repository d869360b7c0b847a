/**
 * Entries of the multi-process test (cluster.test.ts) and the background
 * benchmark. `pipeline` is a resumable run of two recorded steps; each step
 * appends `<task> <step> <pid>` to the file `REIN_TEST_STEP_LOG` names
 * when it finishes its work, so the test can count how often each step of
 * each run was executed, and by which process. With `REIN_TEST_HANG_SECOND`
 * set, the second step of every run this process executes writes
 * `<task> hang <pid>` and never finishes: the test kills the process there.
 * `nap` waits until its run is cancelled; `ask` makes one model request.
 */
import { appendFileSync } from "node:fs";
import { Agent, currentSignal, Runtime, ScriptedProvider, step } from "rein";

const log = (line: string): void => {
  const path = process.env["REIN_TEST_STEP_LOG"];
  if (path !== undefined) appendFileSync(path, `${line}\n`);
};

export class Pipeline extends Agent {
  static runtime = new Runtime({ provider: new ScriptedProvider([(request) => ({ text: `answer ${JSON.stringify(request.messages.at(-1)?.content ?? "").length}` })], { whenExhausted: "repeat-last", recordRequests: false }) });
  // A short lease: the run of a killed worker is free to continue 2 s after its last renewal.
  static methodOptions = { process: { resumable: { leaseMs: 2_000 } } };

  async process(task: string): Promise<string> {
    const asked = await step("first", async (text: string) => {
      const answer = await this.ask(`one line on ${text}`);
      log(`${text} first ${process.pid}`);
      return answer;
    }, task);
    return step("second", async (text: string) => {
      if (process.env["REIN_TEST_HANG_SECOND"] !== undefined) {
        log(`${text} hang ${process.pid}`);
        await new Promise<never>(() => undefined);
      }
      log(`${text} second ${process.pid}`);
      return `${text}: ${asked}, finished by ${process.pid}`;
    }, task);
  }
}

export class Napper extends Agent {
  static runtime = new Runtime({ provider: new ScriptedProvider(["unused"], { whenExhausted: "repeat-last" }) });
  async nap(): Promise<string> {
    const signal = currentSignal();
    await new Promise<void>((resolve) => signal?.addEventListener("abort", () => resolve(), { once: true }));
    return "woke";
  }
}

/** One model request (scripted): the benchmark's run. */
export class Asker extends Agent {
  static runtime = new Runtime({ provider: new ScriptedProvider(["an answer"], { whenExhausted: "repeat-last", recordRequests: false }) });
  async ask1(task: string): Promise<string> {
    return this.ask(task);
  }
}

export const entries = { pipeline: [Pipeline, "process"], nap: [Napper, "nap"], ask: [Asker, "ask1"] } as const;
