import { Agent } from "../agent";
import { CancelledError } from "@rein/guard";
import { step } from "../../resumable/step";

/** Set to stop the next run after its first step (as a cancel would), so a test can resume it. */
export const interrupt = { next: false };

/** A Pipeline of the billing module: same class name as the other module's, its own durable id. */
export class Pipeline extends Agent {
  static id = "billing.Pipeline";
  static methodOptions = { process: { resumable: true } };
  async process(order: string): Promise<string> {
    const first = await step("receive", async (value: string) => `${value} received`, order);
    return step("finish", async (value: string) => {
      if (interrupt.next) {
        interrupt.next = false;
        throw new CancelledError("stopped for the test");
      }
      return `${value}, finished by billing`;
    }, first);
  }
}
