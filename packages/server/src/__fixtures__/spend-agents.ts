import { Agent, Runtime, ScriptedProvider, currentSignal } from "rein";
import type { EntryInit } from "../entries";

/** What each answer of {@link noterFactory}'s model reports: 2,000 tokens. */
export const NOTER_USAGE = { inputTokens: 1_000, outputTokens: 1_000 };

/** Calls its `note` tool on every turn, for ever: only a cap (or the step budget) ends its run. */
export class Noter extends Agent {
  static methodOptions = { note: { tool: true, description: "Write a note." } };
  note(text: string): string {
    return `noted ${text}`;
  }
  async work(task: string): Promise<string> {
    return this.ask(task);
  }
}

/** A factory entry: a Noter whose model asks for one more note each turn (a different one, so no loop guard steps in), {@link NOTER_USAGE} each. */
export function noterFactory({ onEvent }: EntryInit): Noter {
  const provider = new ScriptedProvider([(request) => ({ toolCalls: [{ name: "note", input: { text: `n${request.messages.length}` } }], usage: NOTER_USAGE })], {
    whenExhausted: "repeat-last",
    recordRequests: false,
  });
  return new Noter({ runtime: new Runtime({ provider, onEvent, maxSteps: 50 }) });
}

/** Answers in one request, 10 + 5 tokens. */
export function answerFactory({ onEvent }: EntryInit): Agent & { answer(task: string): Promise<string> } {
  const provider = new ScriptedProvider([{ text: "answer", usage: { inputTokens: 10, outputTokens: 5 } }], { whenExhausted: "repeat-last", recordRequests: false });
  class Answerer extends Agent {
    async answer(task: string): Promise<string> {
      return this.ask(task);
    }
  }
  return new Answerer({ runtime: new Runtime({ provider, onEvent }) });
}

/** Holds its run until cancelled. */
export class Holder extends Agent {
  async hold(): Promise<string> {
    const signal = currentSignal();
    await new Promise((resolve) => signal?.addEventListener("abort", resolve, { once: true }));
    return "released";
  }
}
