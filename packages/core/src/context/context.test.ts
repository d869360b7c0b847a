import { Agent } from "../agent/agent";
import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "../runtime/runtime";
import { InMemorySessionStore } from "@rein/session";
import { SessionNodeWriter } from "@rein/session";
import { ContextHeadError, ContextProviderError, ContextStoreError } from "@rein/guard";
import { currentReach, withReachBudget } from "../runtime/reach";
import { Context, DELETE } from "./context";

describe("Context map API", () => {
  it("gets, sets, deletes, iterates and counts its names", () => {
    const context = new Context({ a: 1, b: "two" });
    expect(context.get("a")).toBe(1);
    expect(context.has("b")).toBe(true);
    context.set("c", [3]);
    expect([...context.keys()]).toEqual(["a", "b", "c"]);
    expect(context.size).toBe(3);
    expect(context.delete("a")).toBe(true);
    expect(context.delete("missing")).toBe(false);
    expect([...context]).toEqual([["b", "two"], ["c", [3]]]);
    expect(Object.fromEntries(context.entries())).toEqual({ b: "two", c: [3] });
  });

  it("a derived Context inherits names; its writes never reach the parent; DELETE hides an inherited name", () => {
    const parent = new Context({ style: "terse", audience: "experts" });
    const child = parent.derive();
    expect(child.get("style")).toBe("terse");
    child.set("style", "playful").set("audience", DELETE);
    expect(child.get("style")).toBe("playful");
    expect(child.has("audience")).toBe(false);
    expect([...child.keys()]).toEqual(["style"]);
    expect(parent.get("style")).toBe("terse");
    expect(parent.get("audience")).toBe("experts");
    child.delete("style");
    expect(child.has("style")).toBe(false);
    expect(parent.has("style")).toBe(true);
  });

  it("merge overlays content and explicitly set rules but keeps the call identity", () => {
    const base = new Context({ a: 1, b: 2 }, { callId: "call-1", historyFilter: "dag" });
    const other = new Context({ b: 20, c: 30 }, { callId: "call-2", historyFilter: false, providers: { now: () => "t" } });
    const merged = base.merge(other);
    expect(Object.fromEntries(merged)).toEqual({ a: 1, b: 20, c: 30 });
    expect(merged.historyFilter).toBe(false);
    expect([...merged.providers.keys()]).toEqual(["now"]);
    expect(merged.callId).toBe("call-1");
    expect(base.merge(new Context({ d: 4 })).historyFilter).toBe("dag");
  });

  it("rejects an invalid history filter and non-function providers with a message saying what to use", () => {
    expect(() => new Context({}, { historyFilter: "all" as never })).toThrow('use "dag", "current_call", false, or a function');
    expect(() => new Context({}, { providers: { x: "value" as never } })).toThrow("Context provider 'x' must be a function");
  });
});

describe("Context binding", () => {
  it("Context.current() is the bound Context inside bind(fn) and undefined outside", async () => {
    const context = new Context({ user: "ada" });
    expect(Context.current()).toBeUndefined();
    const read = context.bind(async (suffix: string) => `${String(Context.current()?.get("user"))}${suffix}`);
    await expect(read("!")).resolves.toBe("ada!");
    expect(Context.current()).toBeUndefined();
  });

  it("bind(fn) keeps the caller's reach budget and agent nesting: work bound under a budget cannot escape it", async () => {
    class Inner extends Agent {
      depth(): { limit?: number; used?: number } {
        const reach = currentReach();
        return { limit: reach?.depth.limit, used: reach?.depth.used };
      }
    }
    const context = new Context();
    const bound = withReachBudget({ depth: 2, tokens: 50 }, () => context.bind(() => ({ tokens: currentReach()?.tokens.limit, inner: new Inner().depth() })));
    // Called later, outside the budget's scope: still the budget of the call that bound it.
    expect(bound()).toEqual({ tokens: 50, inner: { limit: 2, used: 1 } });
  });

  it("agents without their own Context inherit the caller's; Context blocks reach the model's user turn", async () => {
    const model = new ScriptedProvider(["ok"]);
    class Helper extends Agent {
      async help() {
        return this.ask("help");
      }
    }
    const helper = new Helper({ runtime: new Runtime({ provider: model }) });
    const context = new Context({ project: "rein" });
    await context.bind(() => helper.help())();
    expect(JSON.stringify(model.requests[0].messages[0])).toContain('<context name=\\"project\\">\\nrein\\n</context>');
    expect(model.requests[0].system).toBe("");
  });
});

describe("Context and sessions", () => {
  it("forSession creates the session when needed and records calls there", async () => {
    const store = new InMemorySessionStore();
    const context = Context.forSession(store, "chat-1", { blocks: { tone: "warm" } });
    expect(context.sessionId).toBe("chat-1");
    expect(store.hasSession("chat-1")).toBe(true);
    const agent = new Agent({ runtime: new Runtime({ provider: new ScriptedProvider(["hello"]) }), context });
    await agent.ask("hi");
    expect(store.readNodes("chat-1").map((n) => n.role)).toEqual(["llm"]);
    expect(context.get("tone")).toBe("warm");
  });

  it("a head that does not exist fails the call with the exact message", async () => {
    const store = new InMemorySessionStore();
    store.createSession("s", {});
    const context = new Context({}, { store: new SessionNodeWriter(store, "s"), headId: "nope" });
    const agent = new Agent({ runtime: new Runtime({ provider: new ScriptedProvider(["x"]) }), context });
    const error = await agent.ask("hi").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContextHeadError);
    expect((error as Error).message).toBe("Context head 'nope' does not exist.");
  });

  it("a second (unshared) writer on the session of the running call is a clear error; another session is fine", async () => {
    const store = new InMemorySessionStore();
    store.createSession("s", {});
    store.createSession("other", {});
    const model = new ScriptedProvider(["x", "y"]);
    const runtime = new Runtime({ provider: model });
    class Outer extends Agent {
      async run(context: Context) {
        return new Agent({ runtime, context }).ask("inner");
      }
    }
    const outer = new Outer({ runtime, context: new Context({}, { store: new SessionNodeWriter(store, "s") }) });
    // `new SessionNodeWriter(store, "s")` would return the writer in use: only a writer of its own is a second one.
    const error = await outer.run(new Context({}, { store: new SessionNodeWriter(store, "s", { shared: false }) })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContextStoreError);
    expect((error as Error).message).toContain("session 's' through a different writer");
    await expect(outer.run(new Context({}, { store: new SessionNodeWriter(store, "other") }))).resolves.toBe("x");
  });

  it("forSession refuses a writer for another session", () => {
    const store = new InMemorySessionStore();
    store.createSession("a", {});
    expect(() => Context.forSession(new SessionNodeWriter(store, "a"), "b")).toThrow("writer for session 'a'");
  });
});

describe("a block the model cannot be shown", () => {
  it("a provider answering a bigint, a function or a symbol fails with ContextProviderError naming it; a static block so is a TypeError naming it; nothing is sent", async () => {
    for (const value of [10n, () => "x", Symbol("s")]) {
      const model = new ScriptedProvider(["never"]);
      const agent = new Agent({ runtime: new Runtime({ provider: model }), context: new Context({}, { providers: { budget: () => value } }) });
      const error = await agent.ask("go").catch((caught: unknown) => caught);
      expect(ContextProviderError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(/^Context provider 'budget' failed: Context block 'budget' (cannot be shown to the model \(.*BigInt.*\)|is a (function|symbol), which cannot be shown to the model): give it a string or a JSON value$/);
      expect(model.requests).toHaveLength(0);
    }
    const model = new ScriptedProvider(["never"]);
    const agent = new Agent({ runtime: new Runtime({ provider: model }), context: new Context({ limit: 10n }) });
    const error = await agent.ask("go").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/^Context block 'limit' cannot be shown to the model/);
    expect(model.requests).toHaveLength(0);
  });
});
