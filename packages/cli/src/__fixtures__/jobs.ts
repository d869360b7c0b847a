/** A module with a resumable entry for `rein runs` (runs-command.test.ts). */
import { Agent, step } from "rein";

/** The steps that ran, in order (reset by tests). */
export const calls: string[] = [];
/** Set to make the second step throw once. */
export const faults = { failSecondOnce: false };

/** Two recorded steps; the second can be made to fail once. */
export class Pipeline extends Agent {
  static methodOptions = { process: { resumable: true } };
  async process(text: string): Promise<string> {
    const upper = await step("upper", async (value: string) => (calls.push("upper"), value.toUpperCase()), text);
    return step("exclaim", async (value: string) => {
      calls.push("exclaim");
      if (faults.failSecondOnce) {
        faults.failSecondOnce = false;
        throw new Error("the second step failed once");
      }
      return `${value}!`;
    }, upper);
  }
}

export const entries = { pipeline: [Pipeline, "process"] } as const;
