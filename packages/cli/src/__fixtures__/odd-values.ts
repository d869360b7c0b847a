/**
 * Entries whose values JSON cannot carry as they are (run-command.test.ts):
 * one throws an object with no prototype (String() of it throws), one
 * answers a bigint, one an object that contains itself.
 */
import { Agent } from "rein";

export class Odd extends Agent {
  async throwBare(_task: string): Promise<never> {
    throw Object.assign(Object.create(null) as object, { reason: "no prototype" });
  }
  async bigAnswer(_task: string): Promise<bigint> {
    return 10n;
  }
  async cyclicAnswer(_task: string): Promise<object> {
    const answer: Record<string, unknown> = { name: "loop" };
    answer["self"] = answer;
    return answer;
  }
}

export const entries = { throwBare: [Odd, "throwBare"], bigAnswer: [Odd, "bigAnswer"], cyclicAnswer: [Odd, "cyclicAnswer"] } as const;
