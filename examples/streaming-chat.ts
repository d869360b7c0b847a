/**
 * A streaming chat in the terminal: a ChatAgent keeps one session across
 * turns, and each answer is printed as the model writes it (text-delta
 * events). Without an API key it runs on a scripted model that remembers
 * what you said; with ANTHROPIC_API_KEY or OPENAI_API_KEY set, `rein`'s
 * createProvider picks the real one.
 *
 * Run: pnpm exec tsx --tsconfig tsconfig.test.json examples/streaming-chat.ts
 * Type a message and press Enter; /quit (or Ctrl-D) ends the chat.
 */
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { ChatAgent, Runtime, ScriptedProvider, createProvider, type ModelProvider, type ModelRequest } from "rein";

export class Assistant extends ChatAgent {
  static instructions = "You are a friendly assistant. Keep answers short.";
}

/** A model for the demo without a key: it answers with what you said, and what you said first. */
export function rememberingModel(): ScriptedProvider {
  return new ScriptedProvider(
    [
      (request: ModelRequest) => {
        const said = request.messages
          .filter((message) => message.role === "user")
          .flatMap((message) => message.content)
          .flatMap((block) => (block.type === "text" ? [block.text] : []));
        const latest = said.at(-1) ?? "";
        return said.length === 1 ? `Nice to meet you! You said: "${latest}".` : `You said: "${latest}". The first thing you told me was: "${said[0]}".`;
      },
    ],
    { whenExhausted: "repeat-last", modelId: "scripted-chat" },
  );
}

function providerFromEnvironment(): ModelProvider {
  const hasKey = process.env["ANTHROPIC_API_KEY"] !== undefined || process.env["OPENAI_API_KEY"] !== undefined;
  return hasKey ? createProvider() : rememberingModel();
}

/**
 * Runs the chat over `input` / `output` until /quit or the end of input.
 * Returns how many turns were made.
 */
export async function runStreamingChat(options: { input?: Readable; output?: Writable; provider?: ModelProvider } = {}): Promise<number> {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const assistant = new Assistant({ runtime: new Runtime({ provider: options.provider ?? providerFromEnvironment() }) });
  const lines = createInterface({ input, terminal: false });
  let turns = 0;
  output.write("Chat with Rein (/quit to end)\n> ");
  for await (const line of lines) {
    const message = line.trim();
    if (message === "/quit") break;
    if (message === "") {
      output.write("> ");
      continue;
    }
    const turn = await assistant.chat(message, {
      onEvent: (event) => {
        // Only this agent's own text: nested agents (if it had any) would stream theirs too.
        if (event.type === "text-delta" && event.agentPath.length === 1) output.write(event.text);
      },
    });
    turns++;
    if (turn.status !== "completed") output.write(`\n[${turn.status}: ${String(turn.error)}]`);
    output.write(`\n  (${turn.requests} request, ${turn.usage.inputTokens} in / ${turn.usage.outputTokens} out tokens)\n> `);
  }
  lines.close();
  output.write("\nBye.\n");
  return turns;
}

if (require.main === module) {
  runStreamingChat().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
