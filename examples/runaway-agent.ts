/**
 * The runaway agent: an agent whose tools include itself, given a task that
 * matches its own description (the seeds' `wiki_agent` case). A model that
 * ignores the situational guidance keeps calling `wiki_agent` from inside
 * `wiki_agent`; the recursion ceiling stops it at depth 5, the model sees
 * the refusal once as a tool error, and a second refusal ends the run.
 *
 * With ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL set (REIN_MODEL
 * picks the model) it runs against that model; without one it runs the same
 * program on `ScriptedProvider`, playing a model that ignores the guidance.
 *
 * Run: pnpm demo
 */
import {
  Agent,
  Context,
  createProvider,
  currentChain,
  depthOf,
  GuardError,
  InMemorySessionStore,
  MAX_AGENTIC_RECURSION_DEPTH,
  ProviderConfigError,
  ProviderError,
  Runtime,
  ScriptedProvider,
  SessionNodeWriter,
  type ModelProvider,
  type ModelRequest,
  type ProviderEnvironment,
  type RunEvent,
} from "rein";

/** The canned wiki the lower-level tools read from. */
const WIKI: Readonly<Record<string, string>> = {
  Recursion:
    "Recursion is a way of defining something in terms of itself. A recursive function calls itself on a smaller " +
    "input until it reaches a base case that it answers directly. Without a base case the calls never end and the " +
    "program runs out of stack.",
  "Base case":
    "The base case of a recursive definition is the input answered without recursing: the empty list, zero, a leaf. " +
    "Every chain of recursive calls must reach one.",
  "Stack overflow":
    "A stack overflow happens when nested calls use more stack than the runtime allows, typically because a " +
    "recursive function never reaches its base case.",
};

const topicSchema = (name: string, description: string) => ({
  type: "object",
  properties: { [name]: { type: "string", description } },
  required: [name],
  additionalProperties: false,
});

/**
 * A wiki researcher whose own entry point, `wiki_agent`, is one of its tools,
 * next to the lower-level `search_wiki` and `read_page`.
 */
export class WikiAgent extends Agent {
  /** The constant system prefix. */
  static instructions =
    "You are a research assistant for a small wiki. Look things up with the tools, then answer in at most three sentences.";
  /** The three methods offered to the model as tools, with explicit argument schemas. */
  static methodOptions = {
    wiki_agent: {
      tool: true,
      description: "Research a topic on the wiki and summarize it.",
      parameters: topicSchema("topic", "The topic to research."),
    },
    search_wiki: {
      tool: true,
      description: "Search the wiki; returns the titles of matching pages.",
      parameters: topicSchema("query", "Words to look for."),
    },
    read_page: {
      tool: true,
      description: "Read one wiki page by its exact title.",
      parameters: topicSchema("title", "A page title, as returned by search_wiki."),
    },
  };

  /** The task given to the model matches this tool's own description. */
  async wiki_agent(topic: string): Promise<string> {
    return this.ask(`Research "${topic}" on the wiki and summarize it.`);
  }

  /** Titles of the wiki pages mentioning any word of `query`, one per line. */
  search_wiki(query: string): string {
    const words = query.toLowerCase().split(/\W+/).filter((word) => word.length > 2);
    const titles = Object.keys(WIKI).filter((title) => {
      const text = `${title} ${WIKI[title]}`.toLowerCase();
      return words.some((word) => text.includes(word));
    });
    return titles.length > 0 ? titles.join("\n") : "No matching pages.";
  }

  /** The text of the page titled `title`, or the list of titles when there is none. */
  read_page(title: string): string {
    return WIKI[title] ?? `No page titled '${title}'. Titles: ${Object.keys(WIKI).join(", ")}.`;
  }
}

/** The topic the demo asks `wiki_agent` to research. */
export const DEMO_TOPIC = "recursion";

/**
 * The same agent for the `rein` CLI, on the runaway script (or, with an API
 * key set, on the model `createProvider` picks), so the runaway run can be
 * watched live: `rein run examples/runaway-agent.ts#runaway --task recursion`.
 */
class RunawayWikiAgent extends WikiAgent {
  static runtime = hasApiKey() ? undefined : new Runtime({ provider: runawayModel() });
}

/** The command that runs this demo's agent under the rein CLI, from the repository root. */
export const WATCH_COMMAND =
  "TSX_TSCONFIG_PATH=tsconfig.test.json node --require tsx/cjs packages/cli/src/bin.ts run examples/runaway-agent.ts#runaway --task recursion";

/** What `rein run examples/runaway-agent.ts#<name>` can call. */
export const entries = { runaway: [RunawayWikiAgent, "wiki_agent"] } as const;

function hasApiKey(): boolean {
  return ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"].some((name) => (process.env[name] ?? "") !== "");
}

/**
 * The scripted stand-in for a model that ignores the guidance: whatever it is
 * told, it delegates the task to `wiki_agent`.
 */
export function runawayModel(): ScriptedProvider {
  return new ScriptedProvider(
    [{ text: "This matches wiki_agent exactly; delegating.", toolCalls: [{ name: "wiki_agent", input: { topic: DEMO_TOPIC } }] }],
    { modelId: "runaway-model", whenExhausted: "repeat-last" },
  );
}

/** Options of {@link runRunawayDemo}. */
export interface RunawayDemoOptions {
  /** The model to run against. @default createProvider(env), else {@link runawayModel} when no provider is configured */
  provider?: ModelProvider;
  /** Where output lines go. @default console.log */
  print?: (line: string) => void;
  /** The environment `createProvider` reads when no provider is given. @default process.env */
  env?: ProviderEnvironment;
}

/** What {@link runRunawayDemo} observed. */
export interface RunawayDemoResult {
  /** `"scripted"` when no provider was configured and the scripted runaway model played the model. */
  readonly mode: "model" | "scripted";
  readonly providerId: string;
  readonly modelId: string;
  /** The final answer, when the run ended normally. */
  readonly answer?: string;
  /** What ended the run otherwise (a `RecursionError` when the ceiling stopped it). */
  readonly error?: unknown;
  /** Model requests made. */
  readonly requests: number;
  /** Guard refusals the model was shown as tool errors. */
  readonly refusalsSeen: number;
  /** Frame names on the call chain when a guard last refused a call; empty if none did. */
  readonly chainAtRefusal: readonly string[];
  /** The session graph as a Mermaid flowchart. */
  readonly graph: string;
}

/**
 * Runs the runaway-agent program once and prints what happens: the model
 * used, each model request and tool call as it happens (from the runtime's
 * events), the call chain where the ceiling stopped it, the final error or
 * answer, the number of model requests and the session graph.
 *
 * @example
 * ```ts
 * const lines: string[] = [];
 * const result = await runRunawayDemo({ provider: runawayModel(), print: (line) => lines.push(line) });
 * result.error; // RecursionError: agentic function WikiAgent.wiki_agent exceeded max nesting depth 5 — …
 * ```
 */
export async function runRunawayDemo(options: RunawayDemoOptions = {}): Promise<RunawayDemoResult> {
  const print = options.print ?? ((line: string) => console.log(line));
  let provider = options.provider;
  let mode: RunawayDemoResult["mode"] = "model";
  if (provider === undefined) {
    try {
      provider = createProvider(options.env ?? process.env);
    } catch (error) {
      if (!ProviderConfigError.isInstance(error)) throw error;
      const noKey = error.message.startsWith("No model provider configured");
      print(noKey ? "No API key found." : `No model provider: ${error.message}`);
      print("  (set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL, and optionally REIN_MODEL, to use a real model).");
      print("Running the same program on ScriptedProvider, playing a model that ignores the guidance:");
      print("it always calls wiki_agent.");
      print("");
      provider = runawayModel();
      mode = "scripted";
    }
  }
  print(`Model: ${provider.modelId} (provider: ${provider.providerId})`);
  print(`Task: WikiAgent.wiki_agent(${JSON.stringify(DEMO_TOPIC)}) — its tools: wiki_agent (itself), search_wiki, read_page`);
  print("");

  let requests = 0;
  let refusalsSeen = 0;
  let chainAtRefusal: string[] = [];
  const indent = (): string => "  ".repeat(Math.max(0, currentChain().length - 1));
  const onEvent = (event: RunEvent): void => {
    switch (event.type) {
      case "model-request": {
        requests++;
        const innermost = currentChain().at(-1);
        const depth = innermost === undefined ? 0 : depthOf(innermost.key);
        print(`${indent()}→ model request ${event.step} to ${event.model}, inside ${event.functionName ?? "(top level)"} at depth ${depth}`);
        break;
      }
      case "tool-call":
        print(`${indent()}  model calls ${event.name}(${JSON.stringify(event.input)})`);
        break;
      case "tool-result":
        if (event.isError) print(`${indent()}  tool error: ${String(event.output)}`);
        break;
      case "guard-refusal":
        chainAtRefusal = currentChain().map((frame) => frame.name);
        print(`${indent()}  ✗ ${event.error.name}: ${event.error.message}`);
        print(
          event.aborted
            ? `${indent()}    a second refusal in this run: the whole run ends`
            : `${indent()}    the call does not run; the model gets this refusal as a tool error, once`,
        );
        break;
      default:
        break;
    }
  };
  // Shows what the model is sent: the refusal it gets back as a tool result.
  const watched = watchRequests(provider, (request) => {
    const last = request.messages.at(-1);
    for (const block of last?.role === "user" ? last.content : []) {
      if (block.type === "tool_result" && block.isError === true && String(block.content).startsWith("Refused:")) {
        refusalsSeen++;
        print(`${indent()}  the model now sees the tool error: "${truncate(String(block.content), 150)}"`);
      }
    }
  });

  const store = new InMemorySessionStore();
  const sessionId = "runaway-agent";
  store.createSession(sessionId, { agentId: "WikiAgent", title: `Research ${DEMO_TOPIC}` });
  const writer = new SessionNodeWriter(store, sessionId);
  // maxSteps bounds what a real model may cost even if it wanders without recursing.
  const runtime = new Runtime({ provider: watched, onEvent, maxSteps: 30 });
  const agent = new WikiAgent({ runtime, context: new Context({}, { store: writer }) });

  let answer: string | undefined;
  let error: unknown;
  try {
    answer = await agent.wiki_agent(DEMO_TOPIC);
  } catch (caught) {
    error = caught;
  }
  writer.flush();

  print("");
  if (error === undefined) {
    print("Answer:");
    print(answer ?? "");
    print("");
    print(
      refusalsSeen === 0 && chainAtRefusal.length === 0
        ? "The model followed the guidance: it did the work with the lower-level tools, and no guard had to step in."
        : `The model hit a guard ${refusalsSeen} time(s), took the refusal as guidance and finished.`,
    );
  } else if (GuardError.isInstance(error)) {
    print(`Stopped by the guard. Call chain when it refused the call (${chainAtRefusal.length} frames):`);
    print(`  ${chainAtRefusal.join(" → ")}`);
    print(`${error.name}: ${error.message}`);
  } else {
    const described = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    print(`The run failed: ${described}`);
    if (ProviderError.isInstance(error)) print("Check the API key and base URL, or unset them to watch the scripted run.");
  }
  print(`Model requests: ${requests} (the model saw ${refusalsSeen} refusal(s) as tool errors; ceiling ${MAX_AGENTIC_RECURSION_DEPTH})`);
  print("");
  const graph = store.exportGraph(sessionId, { format: "mermaid" });
  print("Session graph (Mermaid; solid = next in the same call, dotted = runs inside):");
  print(graph.trimEnd());
  print("");
  print("Watch the same runaway run live, with the reach status line (the rein CLI, from source):");
  print(`  ${WATCH_COMMAND}`);
  store.close();

  return {
    mode,
    providerId: provider.providerId,
    modelId: provider.modelId,
    ...(answer !== undefined ? { answer } : {}),
    ...(error !== undefined ? { error } : {}),
    requests,
    refusalsSeen,
    chainAtRefusal,
    graph,
  };
}

/** The same provider, calling `observe` with each request before it is sent. */
function watchRequests(provider: ModelProvider, observe: (request: ModelRequest) => void): ModelProvider {
  return {
    specificationVersion: provider.specificationVersion,
    providerId: provider.providerId,
    modelId: provider.modelId,
    complete(request, callOptions) {
      observe(request);
      return provider.complete(request, callOptions);
    },
    stream(request, callOptions) {
      observe(request);
      return provider.stream(request, callOptions);
    },
  };
}

function truncate(text: string, length: number): string {
  return text.length <= length ? text : `${text.slice(0, length)}…`;
}

if (require.main === module) {
  runRunawayDemo().then(
    (result) => {
      // Being stopped by a guard is the demo working; any other failure is not.
      if (result.error !== undefined && !GuardError.isInstance(result.error)) process.exitCode = 1;
    },
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
