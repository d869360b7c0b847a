/** An entry whose agent has no runtime of its own: it needs the default model provider (from the environment). */
import { Agent } from "rein";

class Plain extends Agent {
  async answer(task: string): Promise<string> {
    return this.ask(task);
  }
}

export const entries = { answer: [Plain, "answer"] } as const;
