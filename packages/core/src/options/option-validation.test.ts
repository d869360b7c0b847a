/**
 * Every public entry validates its arguments (DESIGN.md 3.4): wrong types and
 * unknown keys are a TypeError naming the option and the expected type; async
 * entries reject, never throw synchronously. One table per entry; the good
 * inputs at the end must still be accepted.
 */
import pino from "pino";
import { z } from "zod";
import { agent } from "../agent/agent-function";
import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "../runtime/runtime";
import { InMemorySessionStore } from "@rein/session";
import { SessionNodeWriter } from "@rein/session";
import { SessionStore } from "@rein/session";
import { tool } from "../tools/tool";

class Tooly extends Agent {
  static methodOptions = { lookup: { tool: true, description: "Look a key up." } };
  lookup(key: string): string {
    return `value of ${key}`;
  }
  helper(): string {
    return "help";
  }
}

const noop = tool({ name: "noop", description: "Does nothing.", execute: () => "ok" });
const execute = () => "ok";
const runtime = () => new Runtime({ provider: new ScriptedProvider(["a"], { whenExhausted: "repeat-last" }) });
const tooly = () => new Tooly({ runtime: runtime() });
const memoryStore = () => {
  const store = new InMemorySessionStore();
  store.createSession("s", {});
  return store;
};

/** [label, call, text the message must contain]. */
type Case = readonly [string, () => unknown, string];

const SYNC: readonly Case[] = [
  // new Agent(...)
  ["new Agent(null)", () => new Agent(null as never), "Invalid Agent options: null — expected an object of options"],
  ['new Agent("x")', () => new Agent("x" as never), 'Invalid Agent options: "x" — expected an object of options'],
  ["new Agent([])", () => new Agent([] as never), "Invalid Agent options: an array of 0 — expected an object of options"],
  ['Agent tools: "x"', () => new Agent({ tools: "x" as never }), 'Invalid Agent option tools: "x" — expected an array of tools or tool-method names'],
  ["Agent tools: [42]", () => new Agent({ tools: [42 as never] }), "Invalid Agent option tools[0]: 42 — expected a tool or a tool-method name"],
  ["Agent tools: [{}]", () => new Agent({ tools: [{} as never] }), "Invalid Agent option tools[0]: an object — expected a tool (from tool() or agent.asTools())"],
  ["Agent runtime: {}", () => new Agent({ runtime: {} as never }), "Invalid Agent option runtime: an object — expected a Runtime (an object with an exec method)"],
  ["Agent model: 42", () => new Agent({ model: 42 as never }), "Invalid Agent option model: 42 — expected a model id (a non-empty string)"],
  ['Agent model: ""', () => new Agent({ model: "" }), 'Invalid Agent option model: "" — expected a model id'],
  ['Agent effort: "max"', () => new Agent({ effort: "max" as never }), 'Invalid Agent option effort: "max" — expected "low", "medium" or "high"'],
  ["Agent instructions: 5", () => new Agent({ instructions: 5 as never }), "Invalid Agent option instructions: 5 — expected a string"],
  ["Agent context: {}", () => new Agent({ context: {} as never }), "Invalid Agent option context: an object — expected a Context"],
  ["Agent name: 1", () => new Agent({ name: 1 as never }), "Invalid Agent option name: 1 — expected a non-empty string"],
  ["Agent description: false", () => new Agent({ description: false as never }), "Invalid Agent option description: false — expected a string"],
  ["Agent approveToolCall: true", () => new Agent({ approveToolCall: true as never }), "Invalid Agent option approveToolCall: true — expected a function"],
  ['Agent loopDetection: "on"', () => new Agent({ loopDetection: "on" as never }), 'Invalid Agent option loopDetection: "on" — expected loop-detection settings (an object)'],
  ['Agent methodOptions: "x"', () => new Agent({ methodOptions: "x" as never }), 'Invalid Agent option methodOptions: "x" — expected { methodName: { ...options } }'],
  ['Agent methodOptions.lookup: "x"', () => new Tooly({ methodOptions: { lookup: "x" as never } }), 'Invalid Agent option methodOptions.lookup: "x" — expected an object of method options'],
  ['Agent methodOptions tool: "yes"', () => new Tooly({ methodOptions: { lookup: { tool: "yes" as never } } }), `Invalid methodOptions for Tooly.lookup: 'tool' expected true or false`],
  ["Agent methodOptions unknown key", () => new Tooly({ methodOptions: { lookup: { descripton: "x" } as never } }), "Invalid methodOptions for Tooly.lookup: unknown key 'descripton'"],
  ["Agent methodOptions timeout: -1", () => new Tooly({ methodOptions: { lookup: { timeout: -1 } } }), "Invalid methodOptions for Tooly.lookup: 'timeout' expected a positive number"],
  ["Agent methodOptions maxResultChars: 0.5", () => new Tooly({ methodOptions: { lookup: { maxResultChars: 0.5 } } }), "Invalid methodOptions for Tooly.lookup: 'maxResultChars' expected a positive integer"],
  ['Agent methodOptions expose per instance', () => new Tooly({ methodOptions: { lookup: { expose: "hidden" } } }), "Invalid methodOptions for Tooly.lookup: 'expose' is fixed when the class is first used"],
  ["Agent methodOptions tool: true on a non-tool", () => new Tooly({ methodOptions: { helper: { tool: true } } }), "Invalid methodOptions for Tooly.helper: tool: true needs helper to be a tool method of the class"],
  ["Agent methodOptions for a missing method", () => new Tooly({ methodOptions: { walk: {} } }), "Invalid methodOptions for Tooly.walk: Tooly has no method named 'walk'"],
  ['Agent tools: ["ghost"]', () => new Tooly({ tools: ["ghost"] }), "Tooly has no tool method named 'ghost' (its tool methods: lookup)"],
  ['Agent tools: ["helper"] (not a tool)', () => new Tooly({ tools: ["helper"] }), "Tooly has no tool method named 'helper'"],
  ["Agent unknown keys", () => new Agent({ foo: 1, bar: 2 } as never), "Unsupported Agent options: foo, bar"],
  [
    'Agent class default static tools = "x"',
    () => new (class BadTools extends Agent { static tools = "x"; })(),
    'Invalid Agent class default BadTools.tools: "x" — expected an array of tools or tool-method names',
  ],
  [
    'Agent class default static effort = "max"',
    () => new (class BadEffort extends Agent { static effort = "max"; })(),
    'Invalid Agent class default BadEffort.effort: "max" — expected "low", "medium" or "high"',
  ],
  // Agent.fromSpec
  ["fromSpec(null)", () => Agent.fromSpec(null as never), "Invalid Agent spec options: null — expected an object of options"],
  ['fromSpec("spec")', () => Agent.fromSpec("spec" as never), 'Invalid Agent spec options: "spec"'],
  ["fromSpec unknown key", () => Agent.fromSpec({ name: "x", foo: 1 } as never), "Unsupported Agent spec options: foo"],
  ['fromSpec tools: "search"', () => Agent.fromSpec({ tools: "search" as never }), 'Invalid Agent spec option tools: "search" — expected an array of tools or tool-method names'],
  ['fromSpec effort: "max"', () => Agent.fromSpec({ effort: "max" as never }), 'Invalid Agent spec option effort: "max"'],
  ["fromSpec overrides null", () => Agent.fromSpec({}, null as never), "Invalid Agent options: null"],
  // new Runtime(...)
  ["new Runtime(null)", () => new Runtime(null as never), "Invalid Runtime options: null — expected an object of options"],
  ["Runtime unknown key", () => new Runtime({ providr: 1 } as never), "Unsupported Runtime options: providr"],
  ["Runtime provider: {}", () => new Runtime({ provider: {} as never }), "Invalid Runtime option provider: an object — expected a model provider (an object with a complete method)"],
  ['Runtime provider: "anthropic"', () => new Runtime({ provider: "anthropic" as never }), 'Invalid Runtime option provider: "anthropic" — expected a model provider'],
  ["Runtime maxSteps: 0", () => new Runtime({ maxSteps: 0 }), "Invalid Runtime option maxSteps: 0 — expected a positive integer"],
  ["Runtime maxIterations: NaN", () => new Runtime({ maxIterations: NaN }), "Invalid Runtime option maxIterations: NaN — expected a positive integer"],
  ["Runtime recursionLimit: 2.5", () => new Runtime({ recursionLimit: 2.5 }), "Invalid Runtime option recursionLimit: 2.5 — expected a positive integer"],
  ["Runtime maxCycleRepeats: -1", () => new Runtime({ maxCycleRepeats: -1 }), "Invalid Runtime option maxCycleRepeats: -1 — expected a positive integer"],
  ['Runtime maxChainDepth: "25"', () => new Runtime({ maxChainDepth: "25" as never }), 'Invalid Runtime option maxChainDepth: "25" — expected a positive integer'],
  ["Runtime maxContextTokens: Infinity", () => new Runtime({ maxContextTokens: Infinity }), "Invalid Runtime option maxContextTokens: Infinity — expected a positive integer"],
  ["Runtime logger: {}", () => new Runtime({ logger: {} as never }), "Invalid Runtime option logger: an object — expected a pino logger"],
  ['Runtime onEvent: "log"', () => new Runtime({ onEvent: "log" as never }), 'Invalid Runtime option onEvent: "log" — expected a function (event) => void'],
  ["Runtime loopDetection: true", () => new Runtime({ loopDetection: true as never }), "Invalid Runtime option loopDetection: true — expected loop-detection settings (an object)"],
  ["Runtime model: 7", () => new Runtime({ model: 7 as never }), "Invalid Runtime option model: 7 — expected a model id"],
  // tool()
  ["tool(null)", () => tool(null as never), "Invalid tool options: null — expected an object of options"],
  ['tool name: "bad name"', () => tool({ name: "bad name", description: "d", execute }), `Invalid tool option name: "bad name" — expected a tool name: 1–64 letters, digits, '_' or '-'`],
  ["tool name: 42", () => tool({ name: 42 as never, description: "d", execute }), "Invalid tool option name: 42 — expected a tool name"],
  ["tool without description", () => tool({ name: "x", execute } as never), "Invalid tool option description: undefined — expected a string (required)"],
  ["tool without execute", () => tool({ name: "x", description: "d" } as never), "Invalid tool option execute: undefined — expected a function (args, { signal }) => result (required)"],
  ['tool execute: "fn"', () => tool({ name: "x", description: "d", execute: "fn" as never }), 'Invalid tool option execute: "fn" — expected a function'],
  ['tool parameters: "string"', () => tool({ name: "x", description: "d", execute, parameters: "string" as never }), 'Invalid tool option parameters: "string" — expected a JSON Schema object or a zod (Standard Schema) schema'],
  ['tool poll: "yes"', () => tool({ name: "x", description: "d", execute, poll: "yes" as never }), 'Invalid tool option poll: "yes" — expected true or false'],
  ["tool unknown key", () => tool({ name: "x", description: "d", execute, handler: execute } as never), "Unsupported tool options: handler"],
  // new Context(...), derive, Context.forSession
  ['new Context("x")', () => new Context("x" as never), 'Invalid Context argument blocks: "x" — expected an object of named values, a Map, or an iterable of [name, value] pairs'],
  ['new Context([["a"]])', () => new Context([["a"]] as never), "Invalid Context argument blocks[0]: an array of 1 — expected a [name, value] pair"],
  ["new Context({}, null)", () => new Context({}, null as never), "Invalid Context options: null — expected an object of options"],
  ["Context parent: {}", () => new Context({}, { parent: {} as never }), "Invalid Context option parent: an object — expected a Context"],
  ['Context historyFilter: "all"', () => new Context({}, { historyFilter: "all" as never }), 'Invalid Context option historyFilter: "all" — use "dag", "current_call", false, or a function'],
  ['Context providers: { x: "v" }', () => new Context({}, { providers: { x: "v" as never } }), "Context provider 'x' must be a function"],
  ['Context providers: "x"', () => new Context({}, { providers: "x" as never }), 'Invalid Context option providers: "x" — expected an object of functions (context) => value'],
  ["Context store: {}", () => new Context({}, { store: {} as never }), "Invalid Context option store: an object — expected a SessionNodeWriter"],
  ["Context headId: 5", () => new Context({}, { headId: 5 as never }), "Invalid Context option headId: 5 — expected a non-empty string"],
  ["Context callId: 5", () => new Context({}, { callId: 5 as never }), "Invalid Context option callId: 5 — expected a non-empty string"],
  ["Context unknown key", () => new Context({}, { parnt: new Context() } as never), "Unsupported Context options: parnt"],
  ["context.derive({ historyFilter: 1 })", () => new Context().derive({ historyFilter: 1 as never }), "Invalid Context option historyFilter: 1"],
  ["Context.forSession(null, ...)", () => Context.forSession(null as never, "s"), "Invalid Context.forSession argument store: null — expected a session store or a SessionNodeWriter"],
  ["Context.forSession(store, 42)", () => Context.forSession(memoryStore(), 42 as never), "Invalid Context.forSession argument sessionId: 42 — expected a non-empty string"],
  ["Context.forSession unknown key", () => Context.forSession(memoryStore(), "s", { headid: "x" } as never), "Unsupported Context.forSession options: headid"],
  ['Context.forSession blocks: "x"', () => Context.forSession(memoryStore(), "s", { blocks: "x" as never }), 'Invalid Context.forSession option blocks: "x"'],
  // session stores and writer
  ["InMemorySessionStore.createSession(42)", () => new InMemorySessionStore().createSession(42 as never), "Invalid InMemorySessionStore.createSession argument id: 42 — expected a non-empty string"],
  ['InMemorySessionStore.createSession("")', () => new InMemorySessionStore().createSession(""), 'Invalid InMemorySessionStore.createSession argument id: "" — expected a non-empty string'],
  ["createSession unknown key", () => new InMemorySessionStore().createSession("s", { agent: "x" } as never), "Unsupported createSession options: agent"],
  ["createSession title: 5", () => new InMemorySessionStore().createSession("s", { title: 5 as never }), "Invalid createSession option title: 5 — expected a string or null"],
  ["InMemorySessionStore.getSession(undefined)", () => memoryStore().getSession(undefined as never), "Invalid InMemorySessionStore argument sessionId: undefined — expected a non-empty string"],
  ["InMemorySessionStore.setHead(s, 5)", () => memoryStore().setHead("s", 5 as never), "Invalid InMemorySessionStore.setHead argument nodeId: 5 — expected a non-empty string or null"],
  ['exportGraph format: "svg"', () => memoryStore().exportGraph("s", { format: "svg" as never }), 'Invalid exportGraph option format: "svg" — expected "json", "mermaid" or "dot"'],
  ["new SessionNodeWriter(store, 42)", () => new SessionNodeWriter(memoryStore(), 42 as never), "Invalid SessionNodeWriter argument sessionId: 42 — expected a non-empty string"],
  ["new SessionNodeWriter({}, s)", () => new SessionNodeWriter({} as never, "s"), "Invalid SessionNodeWriter argument store: an object — expected a session store"],
  ['SessionNodeWriter batching: "sometimes"', () => new SessionNodeWriter(memoryStore(), "s", { batching: "sometimes" as never }), 'Invalid SessionNodeWriter option batching: "sometimes" — expected "tick", "manual" or "none"'],
  ["writer.append({ id: 5 })", () => new SessionNodeWriter(memoryStore(), "s").append({ id: 5 as never, role: "user", name: "user" }), "Invalid SessionNodeWriter.append argument nodeId: 5 — expected a non-empty string"],
  ["writer.update(5, {})", () => new SessionNodeWriter(memoryStore(), "s").update(5 as never, {}), "Invalid SessionNodeWriter.update argument nodeId: 5"],
  ["new SessionStore unknown key", () => new SessionStore({ path: ":memory:", busyTimeout: 1 } as never), "Unsupported SessionStore options: busyTimeout"],
  ["new SessionStore busyTimeoutMs: -1", () => new SessionStore({ path: ":memory:", busyTimeoutMs: -1 }), "Invalid SessionStore option busyTimeoutMs: -1 — expected a non-negative number of milliseconds"],
  [
    "SessionStore.createSession(42)",
    () => {
      const store = new SessionStore({ path: ":memory:" });
      try {
        return store.createSession(42 as never);
      } finally {
        store.close();
      }
    },
    "Invalid SessionStore.createSession argument id: 42 — expected a non-empty string",
  ],
  // agent(), ScriptedProvider
  ["agent() unknown key", () => agent("x", { foo: 1 } as never), "Unsupported agent() options: foo"],
  ["agent() provider: {}", () => agent("x", { provider: {} as never }), "Invalid agent() option provider: an object — expected a model provider"],
  ['ScriptedProvider turns: "a"', () => new ScriptedProvider("a" as never), 'Invalid ScriptedProvider argument turns: "a" — expected an array of scripted turns'],
  ["ScriptedProvider unknown key", () => new ScriptedProvider([], { record: false } as never), "Unsupported ScriptedProvider options: record"],
];

const ASYNC: readonly Case[] = [
  // agent.ask(prompt, overrides)
  ["ask(42)", () => tooly().ask(42 as never), "Invalid ask argument prompt: 42 — expected a string or an array of content blocks"],
  ["ask(null)", () => tooly().ask(null as never), "Invalid ask argument prompt: null — expected a string or an array of content blocks"],
  ['ask([{ type: "text" }])', () => tooly().ask([{ type: "text" }] as never), 'Invalid ask argument prompt[0]: an object — expected a content block ({ type: "text", text }'],
  ["ask([42])", () => tooly().ask([42] as never), "Invalid ask argument prompt[0]: 42 — expected a content block"],
  ['ask("x", null)', () => tooly().ask("x", null as never), "Invalid ask options: null — expected an object of options"],
  ["ask maxIterations: 0", () => tooly().ask("x", { maxIterations: 0 }), "Invalid ask option maxIterations: 0 — expected a positive integer"],
  ["ask maxIterations: -1", () => tooly().ask("x", { maxIterations: -1 }), "Invalid ask option maxIterations: -1 — expected a positive integer"],
  ["ask maxIterations: NaN", () => tooly().ask("x", { maxIterations: NaN }), "Invalid ask option maxIterations: NaN — expected a positive integer"],
  ["ask maxIterations: 1.5", () => tooly().ask("x", { maxIterations: 1.5 }), "Invalid ask option maxIterations: 1.5 — expected a positive integer"],
  ['ask maxIterations: "3"', () => tooly().ask("x", { maxIterations: "3" as never }), 'Invalid ask option maxIterations: "3" — expected a positive integer'],
  ['ask toolChoice: "sometimes"', () => tooly().ask("x", { toolChoice: "sometimes" as never }), `Invalid ask option toolChoice: "sometimes" — expected "auto", "none" or "required"`],
  ['ask toolChoice: { type: "tool" }', () => tooly().ask("x", { toolChoice: { type: "tool" } as never }), "Invalid ask option toolChoice.name: undefined — expected a non-empty string (required)"],
  ['ask toolChoice: { type: "function" }', () => tooly().ask("x", { toolChoice: { type: "function", name: "x" } as never }), 'Invalid ask option toolChoice.type: "function" — expected "tool"'],
  ["ask toolChoice with an unknown field", () => tooly().ask("x", { toolChoice: { type: "tool", name: "x", extra: 1 } as never }), "Invalid ask option toolChoice.extra: 1 — unknown field (known: type, name)"],
  ["ask toolChoice names a tool not offered", () => tooly().ask("x", { tools: [noop], toolChoice: { type: "tool", name: "ghost" } }), "Invalid Runtime.exec option toolChoice: names tool 'ghost', which the request does not offer (its tools: noop)"],
  ['ask toolChoice: "required" with tools: []', () => tooly().ask("x", { tools: [], toolChoice: "required" }), 'Invalid Runtime.exec option toolChoice: "required" — the request offers no tools to call'],
  ['ask signal: "abort"', () => tooly().ask("x", { signal: "abort" as never }), 'Invalid ask option signal: "abort" — expected an AbortSignal'],
  ['ask tools: "x"', () => tooly().ask("x", { tools: "x" as never }), 'Invalid ask option tools: "x" — expected an array of tools or tool-method names'],
  ["ask tools: [42]", () => tooly().ask("x", { tools: [42 as never] }), "Invalid ask option tools[0]: 42 — expected a tool or a tool-method name"],
  ["ask runtime: {}", () => tooly().ask("x", { runtime: {} as never }), "Invalid ask option runtime: an object — expected a Runtime"],
  ['ask context: "ctx"', () => tooly().ask("x", { context: "ctx" as never }), 'Invalid ask option context: "ctx" — expected a Context'],
  ["ask effort: 1", () => tooly().ask("x", { effort: 1 as never }), 'Invalid ask option effort: 1 — expected "low", "medium" or "high"'],
  ["ask model: null", () => tooly().ask("x", { model: null as never }), "Invalid ask option model: null — expected a model id"],
  ["ask instructions: 42", () => tooly().ask("x", { instructions: 42 as never }), "Invalid ask option instructions: 42 — expected a string"],
  ["ask unknown key", () => tooly().ask("x", { tool: [] } as never), "Unsupported ask options: tool"],
  // agent.choose(prompt, options, overrides)
  ["choose(42, [...])", () => tooly().choose(42 as never, ["a"]), "Invalid choose argument prompt: 42 — expected a string"],
  ['choose("?", "a")', () => tooly().choose("?", "a" as never), 'Invalid choose argument options: "a" — expected an array of ids, an array of { id, description }, or { id: description }'],
  ['choose("?", [42])', () => tooly().choose("?", [42] as never), "Invalid choose argument options[0]: 42 — expected an id or { id, description }"],
  ['choose("?", { a: 1 })', () => tooly().choose("?", { a: 1 } as never), "Invalid choose argument options.a: 1 — expected a string"],
  ["choose with an unknown entry field", () => tooly().choose("?", [{ id: "a", label: "x" }] as never), "Invalid choose argument options[0].label: \"x\" — unknown field (known: id, description)"],
  ["choose overrides tools", () => tooly().choose("?", ["a"], { tools: [] } as never), "Unsupported choose options: tools"],
  ["choose maxIterations: 0", () => tooly().choose("?", ["a"], { maxIterations: 0 }), "Invalid choose option maxIterations: 0 — expected a positive integer"],
  // runtime.exec(request)
  ["exec(null)", () => runtime().exec(null as never), "Invalid Runtime.exec options: null — expected an object of options"],
  ["exec({})", () => runtime().exec({} as never), "Invalid Runtime.exec option content: undefined — expected a string or an array of content blocks (required)"],
  ["exec content: 42", () => runtime().exec({ content: 42 as never }), "Invalid Runtime.exec option content: 42 — expected a string or an array of content blocks"],
  ['exec tools: ["search"]', () => runtime().exec({ content: "x", tools: ["search" as never] }), 'Invalid Runtime.exec option tools[0]: "search" — expected a tool (from tool() or agent.asTools())'],
  ["exec maxIterations: 0", () => runtime().exec({ content: "x", maxIterations: 0 }), "Invalid Runtime.exec option maxIterations: 0 — expected a positive integer"],
  ['exec toolChoice: "any"', () => runtime().exec({ content: "x", toolChoice: "any" as never }), 'Invalid Runtime.exec option toolChoice: "any"'],
  ["exec signal: {}", () => runtime().exec({ content: "x", signal: {} as never }), "Invalid Runtime.exec option signal: an object — expected an AbortSignal"],
  ["exec system: 1", () => runtime().exec({ content: "x", system: 1 as never }), "Invalid Runtime.exec option system: 1 — expected a string"],
  ["exec context: {}", () => runtime().exec({ content: "x", context: {} as never }), "Invalid Runtime.exec option context: an object — expected a Context"],
  ['exec effort: "max"', () => runtime().exec({ content: "x", effort: "max" as never }), 'Invalid Runtime.exec option effort: "max"'],
  ["exec loopDetection: 1", () => runtime().exec({ content: "x", loopDetection: 1 as never }), "Invalid Runtime.exec option loopDetection: 1"],
  ["exec unknown key", () => runtime().exec({ content: "x", prompt: "y" } as never), "Unsupported Runtime.exec options: prompt"],
];

describe("every public entry validates its arguments", () => {
  it.each(SYNC)("%s → TypeError", (_label, call, message) => {
    let thrown: unknown;
    try {
      call();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as Error).message).toContain(message);
  });

  it.each(ASYNC)("%s → rejects with a TypeError (never a synchronous throw)", async (_label, call, message) => {
    const result = call();
    expect(result).toBeInstanceOf(Promise);
    const thrown = await (result as Promise<unknown>).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as Error).message).toContain(message);
  });

  it("lists at least 60 bad inputs across the entries", () => {
    expect(SYNC.length + ASYNC.length).toBeGreaterThanOrEqual(60);
  });

  it("rejects before any model request", async () => {
    const model = new ScriptedProvider(["a"], { whenExhausted: "repeat-last" });
    const agentWithModel = new Tooly({ runtime: new Runtime({ provider: model }) });
    await expect(agentWithModel.ask("x", { maxIterations: 0 })).rejects.toThrow(TypeError);
    await expect(agentWithModel.ask("x", { toolChoice: "sometimes" as never })).rejects.toThrow(TypeError);
    expect(model.requestCount).toBe(0);
  });
});

describe("good inputs are still accepted", () => {
  it("Agent: no options, undefined values, every option", () => {
    expect(() => new Agent()).not.toThrow();
    expect(() => new Agent(undefined)).not.toThrow();
    expect(() => new Agent({ model: undefined, tools: undefined })).not.toThrow();
    const context = new Context();
    expect(
      () =>
        new Tooly({
          model: "m",
          effort: "low",
          instructions: "",
          context,
          tools: [noop, "lookup"],
          runtime: runtime(),
          methodOptions: { lookup: { description: "Looks up.", timeout: 100, maxResultChars: 10, requiresApproval: false, poll: true, expose: "full" } },
          name: "T",
          description: "",
          approveToolCall: () => true,
          loopDetection: { enabled: false },
        }),
    ).not.toThrow();
    expect(() => new Tooly({ methodOptions: { lookup: { tool: false } } })).not.toThrow();
  });

  it("Agent.fromSpec with a JSON spec and overrides", () => {
    const spec = JSON.parse('{"name":"T","description":"d","instructions":"i","model":"m","effort":"high","tools":["lookup"]}');
    expect(Tooly.fromSpec(spec, { runtime: runtime() }).name).toBe("T");
  });

  it("ask: content blocks, overrides, a named toolChoice", async () => {
    const agentUnderTest = tooly();
    await expect(agentUnderTest.ask([{ type: "text", text: "hi" }])).resolves.toBe("a");
    await expect(
      agentUnderTest.ask("x", { tools: [noop, "lookup"], toolChoice: { type: "tool", name: "noop" }, maxIterations: 3, signal: new AbortController().signal }),
    ).resolves.toBe("a");
    await expect(agentUnderTest.ask("x", { toolChoice: "none", effort: "medium", model: "m", instructions: "i", context: new Context() })).resolves.toBe("a");
  });

  it("choose: ids, { id, description } entries, { id: description }", async () => {
    const chooser = tooly();
    await expect(chooser.choose("?", ["a", "b"])).resolves.toBe("a");
    await expect(chooser.choose("?", [{ id: "a", description: "first" }, { id: "b" }])).resolves.toBe("a");
    await expect(chooser.choose("?", { a: "first", b: "second" }, { maxIterations: 1 })).resolves.toBe("a");
  });

  it("Runtime and exec with every option", async () => {
    const model = new ScriptedProvider(["done"]);
    const built = new Runtime({
      provider: model,
      model: "m",
      recursionLimit: 3,
      maxCycleRepeats: 2,
      maxChainDepth: 10,
      maxIterations: 5,
      maxSteps: 50,
      logger: pino({ level: "silent" }),
      onEvent: () => undefined,
      loopDetection: { enabled: true, warningThreshold: 5 },
      maxContextTokens: 10_000,
    });
    const result = await built.exec({
      content: [{ type: "text", text: "x" }],
      system: "s",
      tools: [noop],
      toolChoice: "auto",
      maxIterations: 2,
      model: "m",
      effort: "low",
      context: new Context(),
      loopDetection: { enabled: false },
      signal: undefined,
    });
    expect(result.text).toBe("done");
  });

  it("tool() with a zod schema, a JSON Schema, or none", () => {
    expect(() => tool({ name: "a", description: "d", parameters: z.object({ q: z.string() }), execute })).not.toThrow();
    expect(() => tool({ name: "b-c_1", description: "", parameters: { type: "object", properties: {} }, execute, poll: true })).not.toThrow();
  });

  it("Context: an object, a Map, pairs, an iterator; forSession with a store or a writer", () => {
    expect(new Context(new Map([["a", 1]])).get("a")).toBe(1);
    expect(new Context([["a", 1]]).get("a")).toBe(1);
    const parent = new Context({ a: 1 }, { providers: { now: () => 1 }, historyFilter: () => true, callId: "c" });
    expect(parent.merge(new Context({ b: 2 }, { historyFilter: false })).get("b")).toBe(2);
    expect(parent.derive({ historyFilter: "current_call" }).get("a")).toBe(1);
    const store = memoryStore();
    expect(Context.forSession(store, "t", { headId: undefined, blocks: { a: 1 } }).sessionId).toBe("t");
    expect(Context.forSession(new SessionNodeWriter(store, "s"), "s").sessionId).toBe("s");
  });

  it("session stores: nullable fields and ids", () => {
    const store = new InMemorySessionStore();
    expect(store.createSession("s", { agentId: null, title: "t" }).title).toBe("t");
    expect(() => store.setHead("s", null)).not.toThrow();
    expect(() => store.exportGraph("s", { format: "mermaid" })).not.toThrow();
    expect(() => new SessionNodeWriter(store, "s", { batching: "manual" })).not.toThrow();
  });
});
