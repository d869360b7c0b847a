import { RecursionError, currentChain, CancelledError, DecisionError } from "@rein/guard";
import { z } from "zod";
import { Context } from "../context/context";
import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "../runtime/runtime";
import { addPreInvocationHook, removePreInvocationHook } from "../scope/hooks";
import { InMemorySessionStore } from "@rein/session";
import { SessionNodeWriter } from "@rein/session";
import { Agent } from "./agent";
import { method } from "./method-decorator";

function sessionContext(): { context: Context; writer: SessionNodeWriter } {
  const store = new InMemorySessionStore();
  store.createSession("s1", { agentId: "test" });
  const writer = new SessionNodeWriter(store, "s1");
  return { context: new Context({}, { store: writer }), writer };
}

const CUSTOM = Symbol.for("custom");

class Researcher extends Agent {
  static instructions = "Return a short, factual answer.";
  static methodOptions = { research: { tool: true, description: "Answer the prepared question." } };
  prepare(question: string) {
    return question.trim();
  }
  async research(question: string) {
    return this.ask(this.prepare(question));
  }
}

describe("Agent (DESIGN.md example)", () => {
  it("scopes prepare and research, records their nodes and returns the answer", async () => {
    const model = new ScriptedProvider(["Paris."]);
    const { context, writer } = sessionContext();
    const researcher = new Researcher({ runtime: new Runtime({ provider: model }), context });
    const seenChains: string[][] = [];
    const hook = () => seenChains.push(currentChain().map((f) => f.name));
    addPreInvocationHook(hook);
    try {
      expect(await researcher.research("  Capital of France?  ")).toBe("Paris.");
    } finally {
      removePreInvocationHook(hook);
    }
    expect(seenChains).toEqual([["Researcher.research"], ["Researcher.research", "Researcher.prepare"]]);

    writer.flush();
    const nodes = writer.load().all();
    const research = nodes.find((n) => n.name === "Researcher.research")!;
    const prepare = nodes.find((n) => n.name === "Researcher.prepare")!;
    const llm = nodes.find((n) => n.role === "llm")!;
    expect(research.metadata).toMatchObject({ status: "completed", doc: "Answer the prepared question." });
    expect(research.caller).toBeNull();
    expect(research.output).toBe("Paris.");
    expect(prepare).toMatchObject({ role: "code", caller: research.id, output: "Capital of France?" });
    expect(prepare.metadata["status"]).toBe("completed");
    expect(llm).toMatchObject({ caller: research.id, predecessor: prepare.id });
    expect(llm.metadata["usage"]).toEqual({ inputTokens: 10, outputTokens: 5 });
    // The model saw the trimmed question, the instructions as the system prefix.
    expect(model.requests[0].system).toBe("Return a short, factual answer.");
    const userTurn = model.requests[0].messages[0].content;
    expect(userTurn[userTurn.length - 1]).toEqual({ type: "text", text: "Capital of France?" });
  });

  it("construction makes no request and creates no session", () => {
    const model = new ScriptedProvider([]);
    const store = new InMemorySessionStore();
    new Researcher({ runtime: new Runtime({ provider: model }) });
    expect(model.requests).toHaveLength(0);
    expect(store.listSessions()).toHaveLength(0);
  });

  it("records nothing and still works with no store", async () => {
    const model = new ScriptedProvider(["ok"]);
    const researcher = new Researcher({ runtime: new Runtime({ provider: model }) });
    expect(await researcher.research("q")).toBe("ok");
    expect(researcher.prepare(" x ")).toBe("x");
  });
});

describe("Agent options", () => {
  class Configured extends Agent {
    static model = "class-model";
    static instructions = "class instructions";
    async run() {
      return this.ask("go");
    }
  }

  it("resolves class defaults < constructor options < per-call overrides", async () => {
    const model = new ScriptedProvider(["a", "b", "c"]);
    const runtime = new Runtime({ provider: model });
    await new Configured({ runtime }).run();
    await new Configured({ runtime, model: "instance-model" }).run();
    await new Configured({ runtime, model: "instance-model", instructions: "instance" }).ask("x", { model: "call-model" });
    expect(model.requests.map((r) => r.model)).toEqual(["class-model", "instance-model", "call-model"]);
    expect(model.requests.map((r) => r.system)).toEqual(["class instructions", "class instructions", "instance"]);
  });

  it("rejects unknown constructor options with a TypeError naming them", () => {
    expect(() => new Configured({ modle: "x", temprature: 1 } as never)).toThrow(
      new TypeError("Unsupported Agent options: modle, temprature"),
    );
  });

  it("rejects unknown ask overrides", async () => {
    await expect(new Configured().ask("x", { tool: [] } as never)).rejects.toThrow("Unsupported ask options: tool");
  });

  it("builds from a spec with overrides on top", async () => {
    const model = new ScriptedProvider(["done"]);
    const built = Agent.fromSpec({ name: "writer", instructions: "Write.", model: "m1" }, { runtime: new Runtime({ provider: model }), model: "m2" });
    expect(built.name).toBe("writer");
    await built.ask("hi");
    expect(model.requests[0]).toMatchObject({ system: "Write.", model: "m2" });
  });
});

describe("Agent.choose", () => {
  it("returns the chosen id", async () => {
    const model = new ScriptedProvider(["`approve`."]);
    const agent = new Agent({ runtime: new Runtime({ provider: model }) });
    await expect(agent.choose("Approve the refund?", { approve: "pay it", reject: "refuse it" })).resolves.toBe("approve");
    const text = JSON.stringify(model.requests[0].messages);
    expect(text).toContain("- approve: pay it");
    expect(model.requests[0].tools).toEqual([]);
  });

  it("rejects invalid options before any request", async () => {
    const model = new ScriptedProvider(["x"]);
    const agent = new Agent({ runtime: new Runtime({ provider: model }) });
    await expect(agent.choose("?", [])).rejects.toThrow(TypeError);
    await expect(agent.choose("?", ["a", "a"])).rejects.toThrow("appears twice");
    await expect(agent.choose("?", [""])).rejects.toThrow("non-empty");
    expect(model.requests).toHaveLength(0);
  });

  it("throws DecisionError for a pick that is not an option", async () => {
    const agent = new Agent({ runtime: new Runtime({ provider: new ScriptedProvider(["maybe"]) }) });
    const error = await agent.choose("?", ["yes", "no"]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DecisionError);
    expect(error).toMatchObject({ choice: "maybe", options: ["yes", "no"] });
  });
});

describe("auto-scoping", () => {
  class Shapes extends Agent {
    static count = 0;
    static created() {
      return currentChain().map((f) => f.name);
    }
    _helper() {
      return currentChain().map((f) => f.name);
    }
    async later() {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return currentChain().map((f) => f.name);
    }
    get size() {
      return currentChain().length;
    }
    *items() {
      yield currentChain().length;
    }
    [CUSTOM]() {
      return currentChain().length;
    }
  }

  it("scopes instance, static, async and _helper methods; leaves accessors, generators and symbol methods alone", async () => {
    const shapes = new Shapes();
    expect(shapes._helper()).toEqual(["Shapes._helper"]);
    expect(await shapes.later()).toEqual(["Shapes.later"]);
    expect(Shapes.created()).toEqual(["Shapes.created"]);
    expect(shapes.size).toBe(0);
    expect([...shapes.items()]).toEqual([0]);
    expect(shapes[CUSTOM]()).toBe(0);
    expect(shapes._helper.name).toBe("_helper");
  });

  it("wraps once per class, not per instance or call", () => {
    new Shapes();
    const first = Shapes.prototype._helper;
    new Shapes();
    expect(Shapes.prototype._helper).toBe(first);
  });

  it("keys the recursion ceiling by class and method: two classes' run never share a count", () => {
    class First extends Agent {
      run(depth: number): number {
        return depth === 5 ? new Second().run(1) : this.run(depth + 1);
      }
    }
    class Second extends Agent {
      run(depth: number): number {
        return depth === 5 ? depth : this.run(depth + 1);
      }
    }
    expect(new First().run(1)).toBe(5);
    class Runaway extends Agent {
      bodies = 0;
      run(): number {
        this.bodies++;
        return this.run();
      }
    }
    const runaway = new Runaway();
    expect(() => runaway.run()).toThrow(RecursionError);
    expect(runaway.bodies).toBe(5);
  });

  it("binds the agent's Context: Context.current() inside a method is the agent's", () => {
    const context = new Context({ topic: "rivers" });
    class Reader extends Agent {
      read() {
        return Context.current()?.get("topic");
      }
    }
    expect(new Reader({ context }).read()).toBe("rivers");
    expect(Context.current()).toBeUndefined();
  });
});

describe("methodOptions validation", () => {
  it("names the class, method and key of an invalid option at first use", () => {
    class BadKey extends Agent {
      static methodOptions = { run: { tool: true, descripton: "typo" } };
      run() {}
    }
    expect(() => new BadKey()).toThrow("Invalid methodOptions for BadKey.run: unknown key 'descripton'");
    class BadValue extends Agent {
      static methodOptions = { run: { expose: "everything" } };
      run() {}
    }
    expect(() => new BadValue()).toThrow(`Invalid methodOptions for BadValue.run: 'expose' expected "io", "full", "llm" or "hidden"`);
    class Missing extends Agent {
      static methodOptions = { walk: { tool: true } };
      run() {}
    }
    expect(() => new Missing()).toThrow("Invalid methodOptions for Missing.walk: Missing has no method named 'walk'");
  });
});

describe("tool specs", () => {
  class Wiki extends Agent {
    static methodOptions = {
      search: { tool: true, description: "Search the wiki." },
      lookup: {
        tool: true,
        description: "Look up one page.",
        parameters: z.object({ title: z.string(), lang: z.enum(["en", "fr"]).optional() }),
      },
      count: {
        tool: true,
        description: "Count pages.",
        parameters: { type: "object", properties: { prefix: { type: "string" } }, required: ["prefix"] },
      },
    };
    search(query: string, limit = 5, exact = false) {
      return { query, limit, exact };
    }
    lookup(args: { title: string; lang?: string }) {
      return `page ${args.title} (${args.lang ?? "en"})`;
    }
    count(prefix: string) {
      return prefix.length;
    }
    @method({ tool: true, description: "Typed by decorator metadata." })
    typed(title: string, size: number) {
      return `${title}:${size}`;
    }
  }

  it("derives a schema from the signature: names, defaults not required, types from defaults and metadata", () => {
    const tools = new Wiki().asTools();
    const search = tools.find((t) => t.spec.name === "search")!;
    expect(search.spec).toEqual({
      name: "search",
      description: "Search the wiki.",
      parameters: {
        type: "object",
        properties: { query: {}, limit: { type: "number" }, exact: { type: "boolean" } },
        required: ["query"],
      },
    });
    const typed = tools.find((t) => t.spec.name === "typed")!;
    expect(typed.spec.parameters).toEqual({
      type: "object",
      properties: { title: { type: "string" }, size: { type: "number" } },
      required: ["title", "size"],
    });
  });

  it("converts a zod schema and keeps a JSON Schema", () => {
    const tools = new Wiki().asTools();
    expect(tools.find((t) => t.spec.name === "lookup")!.spec.parameters).toEqual({
      type: "object",
      properties: { title: { type: "string" }, lang: { type: "string", enum: ["en", "fr"] } },
      required: ["title"],
    });
    expect(tools.find((t) => t.spec.name === "count")!.spec.parameters).toEqual({
      type: "object",
      properties: { prefix: { type: "string" } },
      required: ["prefix"],
    });
  });

  it("executes with validated arguments mapped to parameters", async () => {
    const tools = new Map(new Wiki().asTools().map((t) => [t.spec.name, t]));
    await expect(tools.get("search")!.execute({ query: "nile" })).resolves.toEqual({ query: "nile", limit: 5, exact: false });
    await expect(tools.get("lookup")!.execute({ title: "Nile", lang: "fr" })).resolves.toBe("page Nile (fr)");
    await expect(tools.get("count")!.execute({ prefix: "abc" })).resolves.toBe(3);
    await expect(tools.get("count")!.execute({ prefix: 3 })).rejects.toThrow("arguments.prefix: expected string, got number");
    await expect(tools.get("lookup")!.execute({ lang: "de" })).rejects.toThrow("invalid arguments for tool 'lookup'");
  });
});

describe("pre-invocation hooks", () => {
  it("a hook throwing CancelledError aborts the call and its node is cancelled", async () => {
    const { context, writer } = sessionContext();
    class Job extends Agent {
      ran = false;
      async work() {
        this.ran = true;
      }
    }
    const job = new Job({ context });
    const hook = () => {
      throw new CancelledError("stopped by policy");
    };
    addPreInvocationHook(hook);
    try {
      await expect(job.work()).rejects.toThrow(CancelledError);
    } finally {
      expect(removePreInvocationHook(hook)).toBe(true);
    }
    expect(job.ran).toBe(false);
    writer.flush();
    const node = writer.load().all().find((n) => n.name === "Job.work")!;
    expect(node.metadata["status"]).toBe("cancelled");
    await job.work();
    expect(job.ran).toBe(true);
  });
});

describe("recording values that are not JSON", () => {
  it("records cyclic arguments and bigint results in a readable form instead of failing the call", () => {
    const store = new InMemorySessionStore();
    store.createSession("s", {});
    const writer = new SessionNodeWriter(store, "s");
    class Odd extends Agent {
      take(value: unknown) {
        return 10n;
      }
    }
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic["self"] = cyclic;
    expect(new Odd({ context: new Context({}, { store: writer }) }).take(cyclic)).toBe(10n);
    writer.flush();
    const node = store.readNodes("s")[0];
    expect(node.input).toEqual([{ name: "loop", self: "[circular]" }]);
    expect(node.output).toBe("10n");
    expect(node.metadata["status"]).toBe("completed");
  });
});
