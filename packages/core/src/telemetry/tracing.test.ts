import { execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { context, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { RecursionError, ToolLoopError } from "@rein/guard";
import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import { ScriptedProvider } from "../model/scripted-provider";
import { reachFetch, withReachBudget } from "../runtime/reach";
import { Runtime } from "../runtime/runtime";
import { InMemorySessionStore } from "@rein/session";
import { SessionNodeWriter } from "@rein/session";
import type { SessionNode } from "@rein/session";
import { tool } from "../tools/tool";
import { activeTracer } from "./tracing";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

function sessionOf(id = "s") {
  const store = new InMemorySessionStore();
  store.createSession(id, {});
  const writer = new SessionNodeWriter(store, id);
  return { context: new Context({}, { store: writer }), nodes: (): SessionNode[] => store.readNodes(id) };
}

const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
const idOf = (span: ReadableSpan): string => span.spanContext().spanId;

/** Three agents, each calling the next as a tool: Planner → Researcher → Librarian. */
function threeAgents(options: { captureContent?: boolean } = {}) {
  const telemetry = { captureContent: options.captureContent ?? false };
  class Librarian extends Agent {
    static methodOptions = { lookup: { tool: true, description: "Look a title up." } };
    async lookup(title: string): Promise<string> {
      return this.ask(`Find ${title}`, { tools: [] });
    }
  }
  class Researcher extends Agent {
    static methodOptions = { research: { tool: true, description: "Research a question." } };
    async research(question: string): Promise<string> {
      const librarian = new Librarian({ runtime: new Runtime({ provider: new ScriptedProvider(["Shelf 4."], { modelId: "lib-model" }), telemetry }) });
      return this.ask(question, { tools: librarian.asTools() });
    }
  }
  class Planner extends Agent {
    async plan(goal: string): Promise<string> {
      const researcher = new Researcher({
        runtime: new Runtime({
          provider: new ScriptedProvider([{ toolCalls: [{ name: "lookup", input: { title: "Dune" } }] }, "It is on shelf 4."], { modelId: "research-model" }),
          telemetry,
        }),
      });
      return this.ask(goal, { tools: researcher.asTools() });
    }
  }
  const planner = new Planner({
    runtime: new Runtime({
      provider: new ScriptedProvider([{ toolCalls: [{ name: "research", input: { question: "Where is Dune?" } }] }, "Shelf 4, says research."], {
        modelId: "plan-model",
      }),
      telemetry,
    }),
  });
  return planner;
}

describe.each([
  ["with an AsyncLocalStorage context manager", true],
  ["with no context manager (spans nest by Rein's own call scopes)", false],
])("OpenTelemetry spans %s", (_label, withContextManager) => {
  let manager: AsyncLocalStorageContextManager | undefined;
  beforeAll(() => {
    trace.setGlobalTracerProvider(provider);
    if (withContextManager) {
      manager = new AsyncLocalStorageContextManager().enable();
      context.setGlobalContextManager(manager);
    }
  });
  afterAll(() => {
    trace.disable();
    context.disable();
    manager?.disable();
  });
  beforeEach(() => exporter.reset());

  it("the span tree of a 3-agent nested run matches the session DAG", async () => {
    const { context: ctx, nodes } = sessionOf();
    const planner = threeAgents();
    await ctx.bind(() => planner.plan("Find Dune"))();
    const spans = exporter.getFinishedSpans();
    const byId = new Map(spans.map((span) => [idOf(span), span]));
    const graph = nodes();
    const nodeById = new Map(graph.map((node) => [node.id, node]));

    // One trace; the names Rein promises.
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
    expect(spans.map((span) => span.name).sort()).toEqual(
      [
        "invoke_agent Planner",
        "chat plan-model",
        "chat plan-model",
        "execute_tool research",
        "invoke_agent Researcher",
        "chat research-model",
        "chat research-model",
        "execute_tool lookup",
        "invoke_agent Librarian",
        "chat lib-model",
      ].sort(),
    );

    // Every Agent entry's span names its code node; the DAG's caller of each is the node of the
    // agent span above it, reached through the execute_tool span whose call id the node records.
    const agentSpans = spans.filter((span) => span.name.startsWith("invoke_agent"));
    const root = agentSpans.find((span) => span.name === "invoke_agent Planner")!;
    expect(parentOf(root)).toBeUndefined();
    for (const span of agentSpans) {
      const node = nodeById.get(span.attributes["rein.node.id"] as string)!;
      expect(node).toMatchObject({ role: "code", name: `${span.attributes["gen_ai.agent.name"]}.${String(node.name).split(".")[1]}` });
      expect(span.attributes["rein.session.id"]).toBe("s");
      if (span === root) {
        expect(node.caller).toBeNull();
        continue;
      }
      const toolSpan = byId.get(parentOf(span)!)!;
      expect(toolSpan.name).toMatch(/^execute_tool /);
      expect(toolSpan.attributes["gen_ai.tool.call.id"]).toBe(node.metadata["toolCallId"]);
      const callerSpan = byId.get(parentOf(toolSpan)!)!;
      expect(callerSpan.name).toMatch(/^invoke_agent /);
      expect(callerSpan.attributes["rein.node.id"]).toBe(node.caller);
    }

    // Each chat span is an llm node of the call its agent span stands for.
    for (const span of spans.filter((span) => span.name.startsWith("chat "))) {
      const node = nodeById.get(span.attributes["rein.node.id"] as string)!;
      expect(node.role).toBe("llm");
      const agentSpan = byId.get(parentOf(span)!)!;
      expect(agentSpan.name).toMatch(/^invoke_agent /);
      expect(node.caller).toBe(agentSpan.attributes["rein.node.id"]);
    }
    expect(graph.filter((node) => node.role === "llm")).toHaveLength(5);
  });

  it("chat and execute_tool spans carry the GenAI attributes, and no content unless asked", async () => {
    await threeAgents().plan("Find Dune");
    const spans = exporter.getFinishedSpans();
    const chat = spans.find((span) => span.name === "chat research-model")!;
    expect(chat.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "scripted",
      "gen_ai.request.model": "research-model",
      "gen_ai.response.model": "research-model",
      "gen_ai.usage.input_tokens": 10,
      "gen_ai.usage.output_tokens": 5,
    });
    expect(["tool_use", "end_turn"]).toContain((chat.attributes["gen_ai.response.finish_reasons"] as string[])[0]);
    const lookup = spans.find((span) => span.name === "execute_tool lookup")!;
    expect(lookup.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "lookup",
      "gen_ai.tool.type": "function",
      "gen_ai.tool.description": "Look a title up.",
    });
    expect(lookup.attributes["gen_ai.tool.call.id"]).toEqual(expect.any(String));
    const agent = spans.find((span) => span.name === "invoke_agent Researcher")!;
    expect(agent.attributes).toMatchObject({ "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Researcher", "rein.function.name": "Researcher.research" });
    for (const span of spans) {
      for (const key of ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"]) {
        expect(span.attributes[key]).toBeUndefined();
      }
      expect(span.status.code).not.toBe(SpanStatusCode.ERROR);
    }
  });

  it("captureContent: true puts messages, tool arguments and results on the spans", async () => {
    await threeAgents({ captureContent: true }).plan("Find Dune");
    const spans = exporter.getFinishedSpans();
    const chat = spans.find((span) => span.name === "chat plan-model")!;
    expect(String(chat.attributes["gen_ai.input.messages"])).toContain("Find Dune");
    expect(String(chat.attributes["gen_ai.output.messages"])).toContain("research");
    const lookup = spans.find((span) => span.name === "execute_tool lookup")!;
    expect(JSON.parse(String(lookup.attributes["gen_ai.tool.call.arguments"]))).toEqual({ title: "Dune" });
    expect(lookup.attributes["gen_ai.tool.call.result"]).toBe("Shelf 4.");
  });

  it("a failing provider ends its chat span and the agent span with status ERROR", async () => {
    class Failing extends Agent {
      async go(): Promise<string> {
        return this.ask("x");
      }
    }
    const agent = new Failing({ runtime: new Runtime({ provider: new ScriptedProvider([new Error("upstream is down")]) }) });
    await expect(agent.go()).rejects.toThrow("upstream is down");
    const spans = exporter.getFinishedSpans();
    const chat = spans.find((span) => span.name.startsWith("chat "))!;
    const entry = spans.find((span) => span.name === "invoke_agent Failing")!;
    for (const span of [chat, entry]) {
      expect(span.status).toMatchObject({ code: SpanStatusCode.ERROR });
      expect(span.status.message).toContain("upstream is down");
      expect(span.attributes["error.type"]).toBe("Error");
      expect(span.events.some((event) => event.name === "exception")).toBe(true);
    }
    expect(parentOf(chat)).toBe(idOf(entry));
  });

  it("loop warnings and blocks are events on the execute_tool spans, and the ToolLoopError fails the spans above", async () => {
    const status = tool({ name: "status", description: "Check the job.", execute: () => "still running" });
    const runtime = new Runtime({
      provider: new ScriptedProvider([{ toolCalls: [{ name: "status", input: { job: "42" } }] }], { whenExhausted: "repeat-last" }),
      loopDetection: { enabled: true, warningThreshold: 2, criticalThreshold: 4, globalCircuitBreakerThreshold: 30 },
      maxIterations: 30,
    });
    class Waiter extends Agent {
      async wait(): Promise<string> {
        return this.ask("wait for job 42", { tools: [status] });
      }
    }
    await expect(new Waiter({ runtime }).wait()).rejects.toThrow(ToolLoopError);
    const spans = exporter.getFinishedSpans();
    const toolSpans = spans.filter((span) => span.name === "execute_tool status");
    const warned = toolSpans.filter((span) => span.events.some((event) => event.name === "rein.loop_warning"));
    const blocked = toolSpans.filter((span) => span.events.some((event) => event.name === "rein.loop_block"));
    expect(warned.length).toBeGreaterThanOrEqual(1);
    expect(blocked.length).toBeGreaterThanOrEqual(1);
    expect(blocked[0].events.find((event) => event.name === "rein.loop_block")!.attributes).toMatchObject({ "rein.loop.detector": expect.any(String) });
    expect(blocked[0].status.code).toBe(SpanStatusCode.ERROR);
    expect(spans.find((span) => span.name === "invoke_agent Waiter")!.attributes["error.type"]).toBe("ToolLoopError");
  });

  it("a guard refusal is an event on the refused call's execute_tool span", async () => {
    class Recursive extends Agent {
      static methodOptions = { dig: { tool: true, description: "Dig deeper." } };
      async dig(depth: number): Promise<string> {
        return this.ask(`dig ${depth}`);
      }
    }
    const agent = new Recursive({
      runtime: new Runtime({
        provider: new ScriptedProvider([{ toolCalls: [{ name: "dig", input: { depth: 1 } }] }], { whenExhausted: "repeat-last" }),
        recursionLimit: 2,
        loopDetection: { enabled: false },
      }),
    });
    await expect(agent.dig(0)).rejects.toThrow(RecursionError);
    const refusals = exporter
      .getFinishedSpans()
      .filter((span) => span.name === "execute_tool dig")
      .flatMap((span) => span.events.filter((event) => event.name === "rein.guard_refusal"));
    expect(refusals.map((event) => event.attributes)).toEqual([
      expect.objectContaining({ "rein.guard.error": "RecursionError", "rein.guard.aborted": false }),
      expect.objectContaining({ "rein.guard.error": "RecursionError", "rein.guard.aborted": true }),
    ]);
  });

  it("a run under a reach budget with a traceparent from HTTP continues that trace; reach status is a span event", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const parentId = "00f067aa0ba902b7";
    class Remote extends Agent {
      async serve(): Promise<string> {
        return this.ask("x");
      }
    }
    const agent = new Remote({ runtime: new Runtime({ provider: new ScriptedProvider(["done"]) }) });
    await withReachBudget({ depth: 3 }, () => agent.serve(), { traceparent: `00-${traceId}-${parentId}-01` });
    const spans = exporter.getFinishedSpans();
    const entry = spans.find((span) => span.name === "invoke_agent Remote")!;
    expect(entry.spanContext().traceId).toBe(traceId);
    expect(entry.parentSpanContext).toMatchObject({ spanId: parentId, isRemote: true });
    for (const span of spans) expect(span.spanContext().traceId).toBe(traceId);
    const status = entry.events.find((event) => event.name === "rein.reach_status")!;
    expect(status.attributes).toMatchObject({ "rein.reach.depth.used": 1, "rein.reach.depth.limit": 3 });
    const chat = spans.find((span) => span.name.startsWith("chat "))!;
    expect(chat.events.some((event) => event.name === "rein.reach_status")).toBe(true);
  });

  it("a top-level ask outside any Agent method gets its own invoke_agent span", async () => {
    class Helper extends Agent {}
    const result = await new Helper({ runtime: new Runtime({ provider: new ScriptedProvider(["hi"]) }) }).ask("hello");
    expect(result).toBe("hi");
    const spans = exporter.getFinishedSpans();
    const entry = spans.find((span) => span.name === "invoke_agent Helper")!;
    expect(entry.attributes).toMatchObject({ "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 5 });
    expect(parentOf(spans.find((span) => span.name.startsWith("chat "))!)).toBe(idOf(entry));
  });

  if (withContextManager) {
    it("spans start under the caller's active span, and code inside a tool runs with the execute_tool span active", async () => {
      let activeInTool: string | undefined;
      const probe = tool({
        name: "probe",
        description: "Looks at the active span.",
        execute: () => {
          activeInTool = trace.getActiveSpan()?.spanContext().spanId;
          return "ok";
        },
      });
      class Prober extends Agent {
        async go(): Promise<string> {
          return this.ask("probe it", { tools: [probe] });
        }
      }
      const agent = new Prober({ runtime: new Runtime({ provider: new ScriptedProvider([{ toolCalls: [{ name: "probe" }] }, "done"]) }) });
      const tracer = provider.getTracer("app");
      await tracer.startActiveSpan("http request", async (root) => {
        await agent.go();
        root.end();
      });
      const spans = exporter.getFinishedSpans();
      const root = spans.find((span) => span.name === "http request")!;
      const entry = spans.find((span) => span.name === "invoke_agent Prober")!;
      expect(parentOf(entry)).toBe(idOf(root));
      expect(activeInTool).toBe(idOf(spans.find((span) => span.name === "execute_tool probe")!));
    });
  }
});

describe("with no OpenTelemetry SDK registered", () => {
  it("a program that traces nothing never loads the OpenTelemetry API (a fresh process runs an agent)", () => {
    const root = join(__dirname, "..", "..", "..", "..");
    const output = execFileSync(
      process.execPath,
      [
        "--require",
        require.resolve("tsx/cjs"),
        "-e",
        `const core = require("./packages/core/src/index.ts");
         class Helper extends core.Agent {}
         new core.Runtime();
         new Helper({ runtime: new core.Runtime({ provider: new core.ScriptedProvider(["ok"]) }) }).ask("hi").then((answer) => {
           const loaded = Object.keys(require.cache).some((path) => path.includes("/@opentelemetry/api/"));
           console.log(JSON.stringify({ answer, loaded }));
         });`,
      ],
      { cwd: root, env: { ...process.env, TSX_TSCONFIG_PATH: join(root, "tsconfig.test.json") }, encoding: "utf8" },
    );
    expect(JSON.parse(output.trim().split("\n").at(-1)!)).toEqual({ answer: "ok", loaded: false });
  }, 60_000); // sized for a loaded 2-core machine

  it("Rein finds no tracer and makes no spans", async () => {
    trace.disable();
    expect(activeTracer()).toBeUndefined();
    exporter.reset();
    await threeAgents().plan("Find Dune");
    expect(exporter.getFinishedSpans()).toHaveLength(0);
  });
});

describe("reachFetch under tracing", () => {
  beforeAll(() => trace.setGlobalTracerProvider(provider));
  afterAll(() => trace.disable());
  beforeEach(() => exporter.reset());

  it("sends a traceparent whose parent is the execute_tool span of the call making the request", async () => {
    const seen: (string | undefined)[] = [];
    const server = createServer((request, response) => {
      seen.push(request.headers["traceparent"] as string | undefined);
      response.end("pong");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const ping = tool({
        name: "ping",
        description: "Calls the other service.",
        execute: async () => (await reachFetch(`http://127.0.0.1:${port}/`)).text(),
      });
      class Caller extends Agent {
        async go(): Promise<string> {
          return this.ask("ping it", { tools: [ping] });
        }
      }
      await new Caller({ runtime: new Runtime({ provider: new ScriptedProvider([{ toolCalls: [{ name: "ping" }] }, "done"]) }) }).go();
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    const toolSpan = exporter.getFinishedSpans().find((span) => span.name === "execute_tool ping")!;
    expect(seen).toEqual([`00-${toolSpan.spanContext().traceId}-${idOf(toolSpan)}-01`]);
  });
});

describe("the telemetry option", () => {
  it("is checked when the Runtime is made, naming the option and what it expects", () => {
    expect(() => new Runtime({ telemetry: { captureContent: "yes" } as never })).toThrow(/telemetry\.captureContent.*true or false/s);
    expect(() => new Runtime({ telemetry: { capture: true } as never })).toThrow(/unknown field/);
    expect(new Runtime({ telemetry: { captureContent: true } }).captureContent).toBe(true);
    expect(new Runtime().captureContent).toBe(false);
  });
});
