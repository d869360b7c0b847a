import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import type { ModelProvider, ModelRequest, ModelResponse, ModelStreamEvent } from "../model/model-provider";
import { ProviderError } from "@rein/guard";
import { ScriptedProvider } from "../model/scripted-provider";
import { InMemorySessionStore } from "@rein/session";
import { SessionNodeWriter } from "@rein/session";
import { Runtime } from "./runtime";
import { tool } from "../tools/tool";
import { RUN_STREAM_BUFFER } from "./run-stream";
import type { RunEvent } from "./runtime-events";

/** A model that calls `tool` once (with `input`), then answers `answer`; each answer reports 100 input / 10 output tokens, 40 cached. */
function callsThenAnswers(tool: string, answer: string): ScriptedProvider {
  return new ScriptedProvider(
    [
      (request: ModelRequest) => {
        const answered = request.messages.at(-1)!.content.some((block) => block.type === "tool_result");
        return answered
          ? { text: answer, usage: { inputTokens: 100, outputTokens: 10, cachedInputTokens: 40 } }
          : { toolCalls: [{ name: tool, input: {} }], usage: { inputTokens: 100, outputTokens: 10, cachedInputTokens: 40 } };
      },
    ],
    { whenExhausted: "repeat-last", recordRequests: false },
  );
}

/** Outer → Middle → Inner, each agent with a runtime and model of its own, all recording to one session. */
function nestedAgents(store: SessionNodeWriter) {
  class Inner extends Agent {
    static methodOptions = { lookup: { tool: true, description: "Look it up." } };
    lookup(): string {
      return "the fact";
    }
    async dig(): Promise<string> {
      return this.ask("Dig.");
    }
  }
  class Middle extends Agent {
    static methodOptions = { dig: { tool: true, description: "Dig deeper." } };
    async dig(): Promise<string> {
      return new Inner({ runtime: new Runtime({ provider: callsThenAnswers("lookup", "inner answer") }) }).dig();
    }
  }
  class Outer extends Agent {
    static methodOptions = { delegate: { tool: true, description: "Delegate." } };
    async delegate(): Promise<string> {
      return new Middle({ runtime: new Runtime({ provider: callsThenAnswers("dig", "middle answer") }) }).ask("Middle, go.");
    }
  }
  return new Outer({
    runtime: new Runtime({ provider: callsThenAnswers("delegate", "The outer answer, written out in full."), pricing: { scripted: { inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3 } } }),
    context: new Context({}, { store }),
  });
}

async function collect(iterable: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  for await (const event of iterable) events.push(event);
  return events;
}

describe("agent.stream()", () => {
  it("a 3-agent nested run: events in causal order, their counts matching the recorded nodes, each stamped with its agent's path", async () => {
    const store = new InMemorySessionStore();
    store.createSession("s");
    const writer = new SessionNodeWriter(store, "s");
    const run = nestedAgents(writer).stream("Go.");
    const events = await collect(run);
    const result = await run.result;
    const nodes = store.readNodes("s");

    // Counts match the session: one model-response per llm node, one tool-call/-result pair per tool-call code node.
    const llmNodes = nodes.filter((node) => node.role === "llm");
    const toolNodes = nodes.filter((node) => node.metadata["toolCallId"] !== undefined || (node.role === "code" && node.caller === null));
    expect(events.filter((event) => event.type === "model-response")).toHaveLength(llmNodes.length);
    expect(llmNodes).toHaveLength(6);
    expect(events.filter((event) => event.type === "tool-call")).toHaveLength(3);
    expect(toolNodes.length).toBeGreaterThanOrEqual(3);
    expect(events.filter((event) => event.type === "node" && event.phase === "end" && event.role === "llm").map((event) => (event as { nodeId: string }).nodeId)).toEqual(
      llmNodes.map((node) => node.id),
    );

    // Causal order: a tool-result after its tool-call; a request's text-deltas before its model-response; run-finish last.
    const position = (predicate: (event: RunEvent) => boolean): number => events.findIndex(predicate);
    for (const call of events.filter((event) => event.type === "tool-call")) {
      const id = (call as { toolCallId: string }).toolCallId;
      expect(position((event) => event.type === "tool-result" && event.toolCallId === id)).toBeGreaterThan(events.indexOf(call));
    }
    for (const delta of events.filter((event) => event.type === "text-delta")) {
      const { step } = delta as { step: number };
      expect(position((event) => event.type === "model-response" && event.step === step)).toBeGreaterThan(events.indexOf(delta));
    }
    expect(events.at(-1)).toMatchObject({ type: "run-finish", agent: "Outer", result: { status: "completed" } });
    expect(events.filter((event) => event.type === "text-delta" && event.agent === "Outer").map((event) => (event as { text: string }).text).join("")).toBe(
      "The outer answer, written out in full.",
    );

    // Each event names the agent that produced it, and the path down to it.
    expect(new Set(events.map((event) => event.agentPath.join(">")))).toEqual(new Set(["Outer", "Outer>Middle", "Outer>Middle>Inner"]));
    expect(events.find((event) => event.type === "tool-call" && event.name === "lookup")).toMatchObject({ agent: "Inner", agentPath: ["Outer", "Middle", "Inner"] });

    // The result sums every request of the run, nested agents' included.
    expect(result).toMatchObject({ status: "completed", text: "The outer answer, written out in full.", requests: 6, toolCalls: 3, sessionId: "s" });
    expect(result.usage).toMatchObject({ inputTokens: 600, outputTokens: 60, cachedInputTokens: 240, cacheCreationInputTokens: 0 });
    // 6 x (60 fresh x $3 + 40 cached x $0.30 + 10 out x $15) per million.
    expect(result.usage.costUsd).toBeCloseTo((6 * (60 * 3 + 40 * 0.3 + 10 * 15)) / 1e6, 12);
    expect(await run.text).toBe("The outer answer, written out in full.");
  });

  it("records exactly the nodes ask() records", async () => {
    const shapes: string[][] = [];
    for (const mode of ["ask", "stream"] as const) {
      const store = new InMemorySessionStore();
      store.createSession("s");
      const agent = nestedAgents(new SessionNodeWriter(store, "s"));
      if (mode === "ask") await agent.ask("Go.");
      else await agent.stream("Go.").result;
      shapes.push(store.readNodes("s").map((node) => `${node.role}:${node.name}:${String(node.metadata["status"])}`));
    }
    expect(shapes[1]).toEqual(shapes[0]);
  });

  it("onEvent receives the same events, in the same order", async () => {
    const seen: RunEvent[] = [];
    const agent = new (class Talker extends Agent {})({
      runtime: new Runtime({ provider: new ScriptedProvider(["Hello there, streaming world."]), onEvent: (event) => seen.push(event) }),
    });
    const streamed = await collect(agent.stream("Hi."));
    expect(seen).toEqual(streamed);
    expect(streamed.map((event) => event.type)).toEqual([
      "run-start",
      "model-request",
      ...streamed.filter((event) => event.type === "text-delta").map(() => "text-delta"),
      "model-response",
      "run-finish",
    ]);
  });

  it("a slow consumer holds the run back: the buffer never grows past its bound", async () => {
    const long = "x".repeat(4 * (RUN_STREAM_BUFFER * 3));
    const agent = new (class Writer extends Agent {})({ runtime: new Runtime({ provider: new ScriptedProvider([long]) }) });
    const run = agent.stream("Write.");
    let most = 0;
    let deltas = 0;
    for await (const event of run) {
      most = Math.max(most, run.buffered);
      if (event.type === "text-delta") deltas++;
      if (deltas % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(deltas).toBe(RUN_STREAM_BUFFER * 3);
    expect(most).toBeLessThanOrEqual(RUN_STREAM_BUFFER);
    expect(run.droppedEvents).toBe(0);
    expect(await run.text).toBe(long);
  });

  it("a stream nobody iterates never stalls the run: its result arrives, the oldest events are dropped past the bound", async () => {
    const long = "y".repeat(4 * (RUN_STREAM_BUFFER * 2));
    const agent = new (class Writer extends Agent {})({ runtime: new Runtime({ provider: new ScriptedProvider([long]) }) });
    const run = agent.stream("Write.");
    expect((await run.result).text).toBe(long);
    expect(run.buffered).toBe(RUN_STREAM_BUFFER);
    expect(run.droppedEvents).toBeGreaterThan(RUN_STREAM_BUFFER - 10);
  });

  it("a run that fails: .result resolves with the error, .text rejects, the iteration yields run-finish and then throws", async () => {
    const broken: ModelProvider = {
      specificationVersion: "rein-model-v1",
      providerId: "broken",
      modelId: "broken-1",
      complete: (): Promise<ModelResponse> => Promise.reject(new Error("unused")),
      // A stream that ends without its final response event: never a partial answer.
      async *stream(): AsyncIterable<ModelStreamEvent> {
        yield { type: "text-delta", text: "Half an ans" };
      },
    };
    const agent = new (class Talker extends Agent {})({ runtime: new Runtime({ provider: broken }) });
    const run = agent.stream("Hi.");
    const events: RunEvent[] = [];
    await expect(
      (async () => {
        for await (const event of run) events.push(event);
      })(),
    ).rejects.toThrow(ProviderError);
    expect(events.at(-1)).toMatchObject({ type: "run-finish", result: { status: "error" } });
    const result = await run.result;
    expect(result).toMatchObject({ status: "error", text: "", requests: 0 });
    expect(String(result.error)).toMatch(/ended its stream without the final response event/);
    await expect(run.text).rejects.toThrow(/ended its stream without the final response event/);
  });

  it("a custom provider without stream() is asked with complete(): the stream gets its answer whole, no text-delta", async () => {
    const plain = {
      specificationVersion: "rein-model-v1",
      providerId: "plain",
      modelId: "plain-1",
      complete: async (): Promise<ModelResponse> => ({ content: [{ type: "text", text: "whole" }], stopReason: "end_turn", usage: { inputTokens: 1, outputTokens: 1 } }),
    } as unknown as ModelProvider;
    const run = new (class Talker extends Agent {})({ runtime: new Runtime({ provider: plain }) }).stream("Hi.");
    const events = await collect(run);
    expect(events.map((event) => event.type)).toEqual(["run-start", "model-request", "model-response", "run-finish"]);
    expect(await run.text).toBe("whole");
  });

  it("bad arguments throw a TypeError at once", () => {
    const agent = new (class Talker extends Agent {})({ runtime: new Runtime({ provider: new ScriptedProvider(["x"]) }) });
    expect(() => agent.stream(42 as unknown as string)).toThrow(TypeError);
  });
});

describe("RunStream where a consumer meets the run's safe points", () => {
  it("the buffer bound holds with a slow consumer when one answer asks for many tool calls (the run waits before a tool call too)", async () => {
    const calls = Array.from({ length: 800 }, (_, i) => ({ name: "noop", input: { i } }));
    const provider = new ScriptedProvider([{ toolCalls: calls }, "done"]);
    const noop = tool({ name: "noop", description: "n", parameters: { type: "object", properties: { i: { type: "number" } } }, execute: () => "ok" });
    const agent = new (class A extends Agent {})({ runtime: new Runtime({ provider }), tools: [noop] });
    const run = agent.stream("Go.");
    const it = run[Symbol.asyncIterator]();
    await it.next();
    // The consumer is slow: the run goes as far as it can.
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    const most = run.buffered;
    await it.return!();
    await run.result;
    expect(most).toBeLessThanOrEqual(RUN_STREAM_BUFFER);
  });

  it("two next() calls made before either settles both resolve (an iterator read ahead never hangs)", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow: ModelProvider = {
      specificationVersion: "rein-model-v1",
      providerId: "slow",
      modelId: "slow-1",
      complete: (): Promise<ModelResponse> => Promise.reject(new Error("unused")),
      async *stream(): AsyncIterable<ModelStreamEvent> {
        await gate;
        yield { type: "text-delta", text: "a" };
        yield { type: "text-delta", text: "b" };
        yield { type: "response", response: { content: [{ type: "text", text: "ab" }], stopReason: "end_turn", usage: { inputTokens: 1, outputTokens: 1 } } };
      },
    };
    const run = new (class T extends Agent {})({ runtime: new Runtime({ provider: slow }) }).stream("Hi.");
    const it = run[Symbol.asyncIterator]();
    while (run.buffered > 0) await it.next();
    let settled = 0;
    void it.next().then(() => settled++);
    void it.next().then(() => settled++);
    release();
    await run.result;
    // The run has finished: every waiting next() is answered within a turn of the event loop (one never was).
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(2);
  });
});
