import { Agent } from "../../agent/agent";
import type { ModelRequest } from "../../model/model-provider";
import { ScriptedProvider } from "../../model/scripted-provider";

/** A chat agent for session tests: `say` asks the model, which may call `lookup`. Its calls record as `Chat.say`. */
export class Chat extends Agent {
  static methodOptions = { lookup: { tool: true, description: "Look a key up." } };
  lookup(key: string): string {
    return `value of ${key}`;
  }
  async say(text: string): Promise<string> {
    return this.ask(text);
  }
}

/** A model that looks one key up, then answers with the number of messages it was sent. */
export function lookupThenAnswer(): ScriptedProvider {
  return new ScriptedProvider(
    [
      (request: ModelRequest) => {
        const last = request.messages[request.messages.length - 1]!;
        const answered = last.content.some((block) => block.type === "tool_result");
        return answered ? `answer after ${request.messages.length} messages` : { toolCalls: [{ name: "lookup", input: { key: "k" } }] };
      },
    ],
    { whenExhausted: "repeat-last" },
  );
}
