import { CycleError, RecursionError, ContextProviderError, MaxIterationsExceededError, MaxStepsExceededError, MissingProviderError } from "@rein/guard";
import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import type { ContentBlock, ToolResultBlock } from "../model/content";
import type { ModelRequest } from "../model/model-provider";
import { ScriptedProvider } from "../model/scripted-provider";
import { InMemorySessionStore } from "@rein/session";
import { SessionNodeWriter } from "@rein/session";
import { tool } from "../tools/tool";
import { Runtime } from "./runtime";
import type { RuntimeEvent } from "./runtime-events";

const firstText = (blocks: readonly ContentBlock[]): string => (blocks[0]?.type === "text" ? blocks[0].text : "");
const lastUser = (request: ModelRequest) => request.messages[request.messages.length - 1].content;
const toolResults = (request: ModelRequest) => lastUser(request).filter((b): b is ToolResultBlock => b.type === "tool_result");
const systemPrefix = (request: ModelRequest) => JSON.stringify({ system: request.system, tools: request.tools });

function writerFor(sessionId = "s1"): SessionNodeWriter {
  const store = new InMemorySessionStore();
  store.createSession(sessionId, {});
  return new SessionNodeWriter(store, sessionId);
}

describe("system prefix and situational prefix", () => {
  class Planner extends Agent {
    static instructions = "You plan and write documents.";
    static methodOptions = {
      outline: { tool: true, description: "Outline the document." },
      write: { tool: true, description: "Write the document from the outline." },
    };
    async run(topic: string) {
      return this.ask(`Produce a document about ${topic}.`);
    }
    async outline(topic: string) {
      return this.ask(`Outline ${topic}.`);
    }
    async write(outline: string) {
      return this.ask(`Write from: ${outline}`);
    }
  }

  it("keeps the system prefix byte-identical across a run entering three functions; the situational prefix leads each user turn", async () => {
    const model = new ScriptedProvider([
      { toolCalls: [{ name: "outline", input: { topic: "tides" } }] },
      "1. Moon 2. Sun",
      { toolCalls: [{ name: "write", input: { outline: "1. Moon 2. Sun" } }] },
      "Tides follow the moon.",
      "Done: Tides follow the moon.",
    ]);
    const context = new Context({ audience: "children" });
    const planner = new Planner({ runtime: new Runtime({ provider: model }), context });
    await expect(planner.run("tides")).resolves.toBe("Done: Tides follow the moon.");
    expect(model.requests).toHaveLength(5);

    const prefixes = new Set(model.requests.map(systemPrefix));
    expect(prefixes.size).toBe(1);
    expect(model.requests[0].system).toBe("You plan and write documents.");
    for (const request of model.requests) {
      expect(request.system).not.toContain("INSIDE");
      expect(request.system).not.toContain("children");
    }

    // The opening user turn of each loop: situational prefix first, Context blocks next, then the content.
    const innermost = [0, 1, 3].map((i) => firstText(model.requests[i].messages[0].content));
    expect(innermost[0]).toContain("INSIDE the function `Planner.run`");
    expect(innermost[1]).toContain("INSIDE the function `Planner.outline`");
    expect(innermost[1]).toContain("Call path: Planner.run → Planner.outline");
    expect(innermost[1]).toContain("Your job: Outline the document.");
    expect(innermost[1]).toContain("may include it (as the tool `outline`) — do NOT call it");
    expect(innermost[2]).toContain("INSIDE the function `Planner.write`");
    const opening = model.requests[1].messages[0].content;
    expect(opening[1]).toEqual({ type: "text", text: '<context name="audience">\nchildren\n</context>' });
    expect(opening[2]).toEqual({ type: "text", text: "Outline tides." });
  });

  it("puts no situational prefix in a top-level ask outside any function", async () => {
    const model = new ScriptedProvider(["hi"]);
    await new Agent({ runtime: new Runtime({ provider: model }) }).ask("Say hi.");
    expect(model.requests[0].messages).toEqual([{ role: "user", content: [{ type: "text", text: "Say hi." }] }]);
  });
});

describe("recursion through the model", () => {
  class Wiki extends Agent {
    static methodOptions = { wiki_agent: { tool: true, description: "Research a topic on the wiki." } };
    bodies = 0;
    async wiki_agent(topic: string) {
      this.bodies++;
      return this.ask(`Research ${topic}.`);
    }
  }

  it("a model that always calls the function it is inside: 5 bodies, one ceiling error seen, then RecursionError, ≤ 7 requests", async () => {
    const model = new ScriptedProvider([{ toolCalls: [{ name: "wiki_agent", input: { topic: "recursion" } }] }], {
      whenExhausted: "repeat-last",
    });
    const events: RuntimeEvent[] = [];
    const wiki = new Wiki({ runtime: new Runtime({ provider: model, onEvent: (e) => events.push(e) }) });
    const error = await wiki.wiki_agent("recursion").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecursionError);
    expect((error as RecursionError).message).toBe(
      "agentic function Wiki.wiki_agent exceeded max nesting depth 5 — possible runaway recursion",
    );
    expect(wiki.bodies).toBe(5);
    expect(model.requests.length).toBeLessThanOrEqual(7);
    expect(model.requests).toHaveLength(6);

    const ceilingErrors = model.requests.flatMap(toolResults).filter((r) => r.isError);
    expect(ceilingErrors).toHaveLength(1);
    expect(String(ceilingErrors[0].content)).toContain("recursion ceiling (5) was hit");
    expect(String(ceilingErrors[0].content)).toContain("do the work directly");
    // The refusal was reported at depth 5: the request that saw it was made inside the fifth frame.
    expect(firstText(model.requests[5].messages[0].content)).toContain("nesting depth 5 of at most 5");
    expect(events.filter((e) => e.type === "guard-refusal").map((e) => (e as { aborted: boolean }).aborted)).toEqual([false, true]);
  });

  it("the model still sees the function among its tools while running inside it", async () => {
    const model = new ScriptedProvider(["done"]);
    await new Wiki({ runtime: new Runtime({ provider: model }) }).wiki_agent("x");
    expect(model.requests[0].tools.map((t) => t.name)).toEqual(["wiki_agent"]);
  });

  it("an A↔B cycle through the model ends with CycleError in at most 8 requests", async () => {
    const runtime = new Runtime({ provider: new ScriptedProvider([], {}) });
    const model = new ScriptedProvider(
      [(request) => ({ toolCalls: [{ name: request.tools[0].name, input: { task: "t" } }] })],
      { whenExhausted: "repeat-last" },
    );
    const shared = new Runtime({ provider: model });
    class Alpha extends Agent {
      static methodOptions = { alpha: { tool: true, description: "Alpha step." } };
      async alpha(task: string): Promise<string> {
        return this.ask(`alpha ${task}`, { tools: new Beta({ runtime: shared }).asTools() });
      }
    }
    class Beta extends Agent {
      static methodOptions = { beta: { tool: true, description: "Beta step." } };
      async beta(task: string): Promise<string> {
        return this.ask(`beta ${task}`, { tools: new Alpha({ runtime: shared }).asTools() });
      }
    }
    void runtime;
    const error = await new Alpha({ runtime: shared }).alpha("t").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CycleError);
    expect(model.requests.length).toBeLessThanOrEqual(8);
  });
});

describe("budgets", () => {
  it("nested runs that each loop until maxIterations are stopped by the shared maxSteps budget", async () => {
    const noop = tool({ name: "noop", description: "Does nothing.", execute: () => "nothing happened" });
    const model = new ScriptedProvider(
      [(request) => ({ toolCalls: [{ name: request.tools.some((t) => t.name === "noop") ? "noop" : "inner", input: {} }] })],
      { whenExhausted: "repeat-last" },
    );
    class Nest extends Agent {
      static methodOptions = { inner: { tool: true, description: "Works in an inner loop." } };
      async inner(): Promise<string> {
        return this.ask("inner work", { tools: [noop] });
      }
      async outer(): Promise<string> {
        return this.ask("outer work", { tools: ["inner"] });
      }
    }
    const nest = new Nest({ runtime: new Runtime({ provider: model, maxIterations: 4, maxSteps: 10 }) });
    const error = await nest.outer().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MaxStepsExceededError);
    expect(model.requests).toHaveLength(10);
    // The inner loops did hit their own maxIterations before the budget ran out; the model saw that as a tool error.
    const innerFailures = model.requests.flatMap(toolResults).filter((r) => String(r.content).includes("maxIterations 4"));
    expect(innerFailures.length).toBeGreaterThanOrEqual(1);
  });

  it("maxIterations ends a single loop with a typed error", async () => {
    const noop = tool({ name: "noop", description: "Does nothing.", execute: () => "ok" });
    const model = new ScriptedProvider([{ toolCalls: [{ name: "noop" }] }], { whenExhausted: "repeat-last" });
    const runtime = new Runtime({ provider: model });
    await expect(runtime.exec({ content: "loop", tools: [noop], maxIterations: 3 })).rejects.toBeInstanceOf(MaxIterationsExceededError);
    expect(model.requests).toHaveLength(3);
  });
});

describe("bad tool calls from the model", () => {
  it("malformed JSON arguments and an unknown tool name become tool error results, never a crash", async () => {
    let searched = 0;
    const search = tool({
      name: "search",
      description: "Search.",
      parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
      execute: () => ++searched,
    });
    const model = new ScriptedProvider([
      { toolCalls: [{ name: "search", rawArguments: '{"query": "ni' }] },
      { toolCalls: [{ name: "serach", input: { query: "nile" } }] },
      { toolCalls: [{ name: "search", input: { query: 42 } }] },
      "I give up.",
    ]);
    const result = await new Runtime({ provider: model }).exec({ content: "find", tools: [search] });
    expect(result.text).toBe("I give up.");
    expect(searched).toBe(0);
    const [malformed] = toolResults(model.requests[1]);
    expect(malformed).toMatchObject({ isError: true });
    expect(String(malformed.content)).toContain("malformed arguments");
    const [unknown] = toolResults(model.requests[2]);
    expect(String(unknown.content)).toBe("Unknown tool 'serach'. Available tools: search. Call one of those, or answer directly.");
    const [invalid] = toolResults(model.requests[3]);
    expect(String(invalid.content)).toContain("arguments.query: expected string, got number");
  });

  it("a tool that throws becomes a tool error result", async () => {
    const flaky = tool({ name: "flaky", description: "Fails.", execute: () => { throw new Error("disk full"); } });
    const model = new ScriptedProvider([{ toolCalls: [{ name: "flaky" }] }, "sorry"]);
    await new Runtime({ provider: model }).exec({ content: "x", tools: [flaky] });
    expect(toolResults(model.requests[1])[0]).toMatchObject({ isError: true, content: "Tool 'flaky' failed: disk full" });
  });

  it("tools: [] offers no tools, tools undefined offers every tool method", async () => {
    class Kit extends Agent {
      static methodOptions = { a: { tool: true, description: "A." }, b: { tool: true, description: "B." } };
      a() { return 1; }
      b() { return 2; }
    }
    const model = new ScriptedProvider(["x", "y"]);
    const kit = new Kit({ runtime: new Runtime({ provider: model }) });
    await kit.ask("all");
    await kit.ask("none", { tools: [] });
    expect(model.requests.map((r) => r.tools.map((t) => t.name))).toEqual([["a", "b"], []]);
  });
});

describe("Context in requests", () => {
  it("a provider runs once per request; its value is in the user turn, never the system prompt", async () => {
    let calls = 0;
    const context = new Context({}, { providers: { clock: async () => `tick ${++calls}` } });
    const noop = tool({ name: "noop", description: "Noop.", execute: () => "ok" });
    const model = new ScriptedProvider([{ toolCalls: [{ name: "noop" }] }, "done"]);
    await new Runtime({ provider: model }).exec({ content: "go", tools: [noop], context });
    expect(calls).toBe(2);
    expect(JSON.stringify(model.requests[0].messages[0])).toContain("tick 1");
    expect(JSON.stringify(lastUser(model.requests[1]))).toContain("tick 2");
    for (const request of model.requests) expect(request.system).not.toContain("tick");
  });

  it("a provider that throws fails the request with a message naming it", async () => {
    const context = new Context({}, { providers: { weather: () => { throw new Error("no network"); } } });
    const model = new ScriptedProvider(["never"]);
    const error = await new Runtime({ provider: model }).exec({ content: "x", context }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContextProviderError);
    expect((error as Error).message).toBe("Context provider 'weather' failed: no network");
    expect(model.requests).toHaveLength(0);
  });

  it("historyFilter false drops history; dag keeps it", async () => {
    const writer = writerFor();
    const model = new ScriptedProvider(["first answer", "second answer", "third answer"]);
    const agent = new Agent({ runtime: new Runtime({ provider: model }), context: new Context({}, { store: writer }) });
    await agent.ask("first question");
    await agent.ask("second question");
    await agent.ask("third question", { context: new Context({}, { store: writer, historyFilter: false }) });
    expect(model.requests[1].messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(JSON.stringify(model.requests[1].messages[0])).toContain("first question");
    expect(model.requests[2].messages).toEqual([{ role: "user", content: [{ type: "text", text: "third question" }] }]);
  });

  it('"current_call" keeps only what ran inside the current call', async () => {
    const writer = writerFor();
    const model = new ScriptedProvider(["outside answer", "inside one", "inside two", "inside three"]);
    class Worker extends Agent {
      async work() {
        await this.ask("inside first");
        return this.ask("inside second");
      }
    }
    const dag = new Worker({ runtime: new Runtime({ provider: model }), context: new Context({}, { store: writer }) });
    await dag.ask("outside question");
    await dag.work();
    const dagSecond = JSON.stringify(model.requests[2].messages);
    expect(dagSecond).toContain("outside question");
    expect(dagSecond).toContain("inside first");

    const scoped = new Worker({
      runtime: new Runtime({ provider: model }),
      context: new Context({}, { store: writer, historyFilter: "current_call" }),
    });
    model.push("inside four");
    await scoped.work();
    const currentSecond = JSON.stringify(model.requests[4].messages);
    expect(currentSecond).toContain("inside first");
    expect(currentSecond).not.toContain("outside question");
  });
});

describe("Runtime configuration", () => {
  it("rejects unknown options and invalid limits", () => {
    expect(() => new Runtime({ providr: 1 } as never)).toThrow("Unsupported Runtime options: providr");
    expect(() => new Runtime({ maxSteps: 0 })).toThrow("Invalid Runtime option maxSteps: 0");
  });

  it("says what to set when no provider is configured, at the first request only", async () => {
    const runtime = new Runtime();
    await expect(runtime.exec({ content: "x" })).rejects.toBeInstanceOf(MissingProviderError);
    await expect(runtime.exec({ content: "x" })).rejects.toThrow("No model provider configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY");
  });

  it("applies its recursionLimit to the agents using it", async () => {
    class Deep extends Agent {
      bodies = 0;
      dive(): number {
        this.bodies++;
        return this.dive();
      }
    }
    const deep = new Deep({ runtime: new Runtime({ recursionLimit: 3 }) });
    expect(() => deep.dive()).toThrow("exceeded max nesting depth 3");
    expect(deep.bodies).toBe(3);
  });

  it("an aborted signal stops the run", async () => {
    const controller = new AbortController();
    controller.abort(new Error("user pressed stop"));
    const model = new ScriptedProvider(["never"]);
    await expect(new Runtime({ provider: model }).exec({ content: "x", signal: controller.signal })).rejects.toThrow("user pressed stop");
    expect(model.requests).toHaveLength(0);
  });
});
