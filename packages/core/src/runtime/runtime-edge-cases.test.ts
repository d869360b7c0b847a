import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import type { ModelRequest } from "../model/model-provider";
import { ScriptedProvider } from "../model/scripted-provider";
import { InMemorySessionStore } from "@rein/session";
import { SessionNodeWriter } from "@rein/session";
import { tool } from "../tools/tool";
import { Runtime } from "./runtime";

/** What the Anthropic and OpenAI APIs would reject in a request's message sequence. */
function apiProblems(request: ModelRequest): string[] {
  const problems: string[] = [];
  request.messages.forEach((message, index) => {
    if (message.content.length === 0) problems.push(`#${index}: empty content`);
    if (index === 0 && message.role !== "user") problems.push("first message is not a user turn");
    if (index > 0 && request.messages[index - 1].role === message.role) problems.push(`#${index}: two ${message.role} turns in a row`);
    if (message.role === "user") {
      const firstOther = message.content.findIndex((block) => block.type !== "tool_result");
      const lastResult = message.content.map((block) => block.type).lastIndexOf("tool_result");
      if (firstOther !== -1 && lastResult > firstOther) problems.push(`#${index}: tool_result after another block`);
      const previous = request.messages[index - 1];
      const asked = new Set(previous?.content.flatMap((block) => (block.type === "tool_use" ? [block.id] : [])) ?? []);
      for (const block of message.content) {
        if (block.type === "tool_result" && !asked.has(block.toolUseId)) problems.push(`#${index}: result for unknown call ${block.toolUseId}`);
      }
    } else {
      const ids = message.content.flatMap((block) => (block.type === "tool_use" ? [block.id] : []));
      if (new Set(ids).size !== ids.length) problems.push(`#${index}: duplicate tool_use ids`);
      const next = request.messages[index + 1];
      if (next !== undefined) {
        const answered = new Set(next.content.flatMap((block) => (block.type === "tool_result" ? [block.toolUseId] : [])));
        for (const id of ids) if (!answered.has(id)) problems.push(`#${index}: unanswered tool_use ${id}`);
      }
    }
  });
  return problems;
}

function session(): { store: InMemorySessionStore; writer: SessionNodeWriter; context: Context } {
  const store = new InMemorySessionStore();
  store.createSession("s", {});
  const writer = new SessionNodeWriter(store, "s");
  return { store, writer, context: new Context({}, { store: writer }) };
}

describe("message sequences the provider APIs accept", () => {
  it("history of a tool that called a helper never puts text before a tool_result", async () => {
    class Lookup extends Agent {
      static methodOptions = { lookup: { tool: true, description: "Look up." } };
      normalize(key: string) {
        return key.toLowerCase();
      }
      lookup(key: string) {
        return `found ${this.normalize(key)}`;
      }
    }
    const model = new ScriptedProvider([{ toolCalls: [{ name: "lookup", input: { key: "X" } }] }, "x found", "again"]);
    const agent = new Lookup({ runtime: new Runtime({ provider: model }), context: session().context });
    await agent.ask("find X");
    await agent.ask("and again");
    for (const request of model.requests) expect(apiProblems(request)).toEqual([]);
    expect(JSON.stringify(model.requests[2].messages)).not.toContain("Lookup.normalize");
  });

  it("an empty final answer in history still yields a valid next request", async () => {
    const noop = tool({ name: "noop", description: "Noop.", execute: () => "ok" });
    const model = new ScriptedProvider([{ toolCalls: [{ name: "noop" }] }, { text: "" }, "second answer"]);
    const agent = new Agent({ runtime: new Runtime({ provider: model }), context: new Context({ style: "brief" }, { store: session().writer }) });
    await agent.ask("first", { tools: [noop] });
    await agent.ask("second", { tools: [noop] });
    expect(apiProblems(model.requests[2])).toEqual([]);
  });

  it("a compaction in a session does not break later requests", async () => {
    const noop = tool({ name: "noop", description: "Noop.", execute: () => "ok" });
    const model = new ScriptedProvider([{ toolCalls: [{ name: "noop" }] }, { toolCalls: [{ name: "noop" }] }, "summary", "done", "next"]);
    const agent = new Agent({ runtime: new Runtime({ provider: model, maxContextTokens: 60 }), context: session().context });
    await agent.ask("go", { tools: [noop] });
    await agent.ask("next", { tools: [noop] });
    for (const request of model.requests) expect(apiProblems(request)).toEqual([]);
  });

  it("repeated tool_use ids in one turn are made unique, each answered once", async () => {
    const noop = tool({ name: "noop", description: "Noop.", execute: () => "ok" });
    const model = new ScriptedProvider([{ toolCalls: [{ name: "noop", id: "dup" }, { name: "noop", id: "dup" }] }, "done"]);
    await new Runtime({ provider: model }).exec({ content: "x", tools: [noop] });
    expect(apiProblems(model.requests[1])).toEqual([]);
  });
});

describe("bad input never crashes a run", () => {
  it("arguments nested too deep to serialise become a tool error; what was recorded stays", async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = [deep];
    const search = tool({ name: "search", description: "Search.", parameters: { type: "object" }, execute: () => "never" });
    const { store, writer, context } = session();
    const model = new ScriptedProvider([{ toolCalls: [{ name: "search", input: { x: deep } }] }, "recovered"]);
    const result = await new Runtime({ provider: model, loopDetection: { enabled: true } }).exec({ content: "go", tools: [search], context });
    expect(result.text).toBe("recovered");
    const [error] = model.requests[1].messages[2].content;
    expect(error).toMatchObject({ type: "tool_result", isError: true });
    expect(JSON.stringify(error)).toContain("nested deeper than 64 levels");
    writer.flush();
    expect(store.readNodes("s").filter((n) => n.role === "llm")).toHaveLength(2);
  });
});

describe("aborts and recording across nested runs", () => {
  it("aborting the outer run stops nested runs at their next request", async () => {
    const controller = new AbortController();
    let requests = 0;
    const model = new ScriptedProvider(
      [
        (request) => {
          requests++;
          if (requests === 2) controller.abort(new Error("stop"));
          return { toolCalls: [{ name: request.tools[0].name, input: {} }] };
        },
      ],
      { whenExhausted: "repeat-last" },
    );
    const noop = tool({ name: "noop", description: "Noop.", execute: () => "ok" });
    class Outer extends Agent {
      static methodOptions = { inner: { tool: true, description: "Inner loop." } };
      async inner(): Promise<string> {
        return this.ask("inner", { tools: [noop] });
      }
    }
    const outer = new Outer({ runtime: new Runtime({ provider: model }) });
    await expect(outer.ask("outer", { tools: ["inner"], signal: controller.signal })).rejects.toThrow("stop");
    expect(requests).toBe(2);
  });

  it("nothing under an expose: hidden call is recorded, and the session head does not move into it", async () => {
    class Secretive extends Agent {
      static methodOptions = { secret: { expose: "hidden" as const } };
      helper() {
        return "h";
      }
      secret() {
        return this.helper();
      }
      run() {
        return this.secret();
      }
    }
    const { store, writer, context } = session();
    new Secretive({ context }).run();
    writer.flush();
    expect(store.readNodes("s").map((n) => n.name)).toEqual(["Secretive.run"]);
    expect(store.head("s")).toBe(store.readNodes("s")[0].id);
  });

  it("two tool calls in one turn chain one after the other: no spurious branch", async () => {
    class Pair extends Agent {
      static methodOptions = { a: { tool: true, description: "A." }, b: { tool: true, description: "B." } };
      a() {
        return "a";
      }
      b() {
        return "b";
      }
    }
    const { store, writer, context } = session();
    const model = new ScriptedProvider([{ toolCalls: [{ name: "a" }, { name: "b" }] }, "done"]);
    await new Pair({ runtime: new Runtime({ provider: model }), context }).ask("both");
    writer.flush();
    expect(store.listBranches("s")).toHaveLength(1);
    const [firstLlm, a, b, secondLlm] = store.readNodes("s");
    expect([a.predecessor, b.predecessor, secondLlm.predecessor]).toEqual([firstLlm.id, a.id, b.id]);
  });

  it("two asks running at once in one call keep their own conversations", async () => {
    const model = new ScriptedProvider([(request) => `answer to ${JSON.stringify(request.messages[0].content.at(-1))}`], {
      whenExhausted: "repeat-last",
    });
    class Twin extends Agent {
      async both() {
        return Promise.all([this.ask("A"), this.ask("B")]);
      }
    }
    const { store, writer, context } = session();
    await new Twin({ runtime: new Runtime({ provider: model }), context }).both();
    writer.flush();
    const llm = store.readNodes("s").filter((n) => n.role === "llm");
    expect(llm).toHaveLength(2);
    // Both follow the call's start, not each other.
    expect(llm[0].predecessor).toBeNull();
    expect(llm[1].predecessor).toBeNull();
  });
});
