/**
 * The DESIGN.md Researcher: `prepare` and `research` are scoped and
 * recorded, `research` is also a tool the model could call. By default it
 * runs on ScriptedProvider, so it needs no API key; pass another provider to
 * run it against a real model.
 *
 * Run: pnpm exec tsx --tsconfig tsconfig.test.json examples/researcher.ts
 */
import {
  Agent,
  Context,
  InMemorySessionStore,
  Runtime,
  ScriptedProvider,
  SessionNodeWriter,
  type ModelProvider,
} from "@rein/core";

export class Researcher extends Agent {
  static instructions = "Return a short, factual answer.";
  static methodOptions = { research: { tool: true, description: "Answer the prepared question." } };

  prepare(question: string): string {
    return question.trim();
  }

  async research(question: string): Promise<string> {
    return this.ask(this.prepare(question));
  }
}

/** Runs the example and returns the answer and the session graph as mermaid text. */
export async function runResearcher(
  options: { provider?: ModelProvider; print?: (line: string) => void } = {},
): Promise<{ answer: string; graph: string }> {
  const print = options.print ?? console.log;
  const provider = options.provider ?? new ScriptedProvider(["The Nile, at about 6,650 km."]);
  const store = new InMemorySessionStore();
  store.createSession("research-1", { agentId: "Researcher", title: "Longest river" });
  const writer = new SessionNodeWriter(store, "research-1");
  const researcher = new Researcher({
    runtime: new Runtime({ provider }),
    context: new Context({ audience: "a curious ten-year-old" }, { store: writer }),
  });

  const answer = await researcher.research("  Which river is the longest?  ");
  writer.flush();
  const graph = store.exportGraph("research-1", { format: "mermaid" });
  print(`model: ${provider.providerId}/${provider.modelId}`);
  print(`answer: ${answer}`);
  print("session graph:");
  print(graph);
  store.close();
  return { answer, graph };
}

if (require.main === module) void runResearcher();
