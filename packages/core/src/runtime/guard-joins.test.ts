/**
 * Where the guard layer and the Context meet turns, chat agents and plain
 * tools: a paused turn resumed, a ChatAgent without a store, a `tool()` made
 * anew for each call, a runtime's `recursionLimit` under a plain tool. Each
 * case failed before its fix (found by an attack review, 2026-12-03).
 */
import { CycleError, ToolLoopError } from "@rein/guard";
import { InMemorySessionStore } from "@rein/session";
import { Agent } from "../agent/agent";
import { ChatAgent } from "../agent/chat-agent";
import { Context } from "../context/context";
import type { ModelRequest } from "../model/model-provider";
import { ScriptedProvider } from "../model/scripted-provider";
import { tool, type Tool } from "../tools/tool";
import { Runtime } from "./runtime";

const texts = (request: ModelRequest): string[] => request.messages.flatMap((message) => message.content).flatMap((block) => (block.type === "text" ? [block.text] : []));

describe("the Context's blocks reach every request of a turn", () => {
  it("a ChatAgent given a Context with no store keeps that Context's blocks and providers (its own session under it)", async () => {
    const model = new ScriptedProvider(["ok"]);
    const context = new Context({ rules: "NEVER deploy on Fridays" }, { providers: { now: () => "2024-01-05" } });
    await new ChatAgent({ runtime: new Runtime({ provider: model }), context }).chat("hi");
    const seen = texts(model.requests[0]!).join("\n");
    expect(seen).toContain("NEVER deploy on Fridays");
    expect(seen).toContain("2024-01-05");
  });

  it("after resumeTurn, the request that goes on carries the Context's blocks again (the history rebuilt from the session has only the turn's content)", async () => {
    class Operator extends Agent {
      static methodOptions = { deploy: { tool: true, description: "Deploy.", requiresApproval: true } };
      deploy(service: string): string {
        return `${service} deployed`;
      }
    }
    const model = new ScriptedProvider([{ toolCalls: [{ name: "deploy", input: { service: "api" } }] }, "done"]);
    const context = Context.forSession(new InMemorySessionStore(), "s1", { blocks: { rules: "NEVER deploy on Fridays" } });
    const agent = new Operator({ runtime: new Runtime({ provider: model }), context });
    const paused = await agent.runTurn({ input: "deploy api" }, { context });
    expect(texts(model.requests[0]!).join("\n")).toContain("NEVER deploy on Fridays");
    expect(await agent.resumeTurn(paused.continuation!, { approve: true, context })).toMatchObject({ status: "completed" });
    expect(texts(model.requests[1]!).join("\n")).toContain("NEVER deploy on Fridays");
  });
});

describe("plain tools are functions to the guard layer too", () => {
  it("A→B→A through tools made anew for each call is a cycle (CycleError), as with tools made once: it never runs on to the recursion ceiling", async () => {
    const runs = { a: 0, b: 0 };
    class A extends Agent {
      async run(): Promise<unknown> {
        runs.a++;
        return tool({ name: "delegate_b", description: "Ask B.", execute: () => b.run() }).execute({});
      }
    }
    class B extends Agent {
      async run(): Promise<unknown> {
        runs.b++;
        return tool({ name: "delegate_a", description: "Ask A.", execute: () => a.run() }).execute({});
      }
    }
    const a = new A();
    const b = new B();
    const error = await a.run().catch((caught: unknown) => caught);
    expect(CycleError.isInstance(error)).toBe(true);
    expect(runs).toEqual({ a: 3, b: 3 });
  });

  it("a runtime's recursionLimit bounds a plain tool() that re-enters itself through the model, and the guidance states that limit", async () => {
    const model = new ScriptedProvider([{ toolCalls: [{ name: "delegate", input: {} }] }], { whenExhausted: "repeat-last" });
    const runtime = new Runtime({ provider: model, recursionLimit: 2, maxIterations: 3, loopDetection: { enabled: false } });
    let bodies = 0;
    const delegate: Tool = tool({
      name: "delegate",
      description: "Delegate the task.",
      execute: async (): Promise<string> => {
        bodies++;
        return (await runtime.exec({ content: "sub task", tools: [delegate] })).text;
      },
    });
    await runtime.exec({ content: "task", tools: [delegate] }).catch(() => undefined);
    expect(bodies).toBe(2);
    const positions = model.requests.flatMap((request) => texts(request)).filter((text) => /nesting depth \d+ of at most/.test(text));
    for (const text of positions) expect(text).toMatch(/of at most 2\b/);
  });
});

describe("the situational guidance names the tool the model sees", () => {
  it("a tool method that asks through a scoped helper: the guidance names the tool (its job, its depth), not the helper", async () => {
    class Researcher extends ChatAgent {
      static methodOptions = { research: { tool: true, description: "Research a topic and report the findings." } };
      async research(topic: string): Promise<string> {
        return this.askOnce(`Find sources about ${topic}.`);
      }
      async askOnce(prompt: string): Promise<string> {
        return this.ask(prompt);
      }
    }
    const model = new ScriptedProvider([{ text: "three sources" }]);
    const agent = new Researcher({ runtime: new Runtime({ provider: model }) });
    expect(await agent.research("tides")).toBe("three sources");
    const prefix = texts(model.requests[0]!).find((text) => text.startsWith("You are running INSIDE"));
    expect(prefix).toContain("INSIDE the function `Researcher.research`");
    expect(prefix).toContain("as the tool `research`");
    expect(prefix).toContain("Your job: Research a topic and report the findings.");
    expect(prefix).toMatch(/nesting depth 1 of at most 5 for Researcher\.research$/m);
    expect(prefix).not.toContain("INSIDE the function `Researcher.askOnce`");
  });

  it("a helper of another agent, called from a tool, is not guided with the caller's tool: the other agent's model never sees it", async () => {
    class Summarizer extends ChatAgent {
      async summarize(text: string): Promise<string> {
        return this.ask(`Summarize: ${text}`);
      }
    }
    const model = new ScriptedProvider([{ text: "short" }]);
    const runtime = new Runtime({ provider: model });
    const summarizer = new Summarizer({ runtime });
    class Writer extends ChatAgent {
      static methodOptions = { write: { tool: true, description: "Write the report." } };
      async write(text: string): Promise<string> {
        return summarizer.summarize(text);
      }
    }
    await new Writer({ runtime }).write("a long text");
    const prefix = texts(model.requests[0]!).find((text) => text.startsWith("You are running INSIDE"));
    expect(prefix).toContain("INSIDE the function `Summarizer.summarize`");
    expect(prefix).not.toContain("as the tool");
    expect(prefix).toMatch(/nesting depth 1 of at most 5 for Summarizer\.summarize$/m);
  });
});

describe("loop detection across a paused turn", () => {
  it("a turn paused on an approval and resumed goes on with its loop history: the same call approved again and again is warned and then blocked, as within one run", async () => {
    class Poller extends ChatAgent {
      static methodOptions = { deploy: { tool: true, description: "Deploy the service.", requiresApproval: true } };
      static runs = 0;
      deploy(service: string): string {
        Poller.runs++;
        return `${service}: pending`;
      }
    }
    const model = new ScriptedProvider([{ toolCalls: [{ name: "deploy", input: { service: "api" } }] }], { whenExhausted: "repeat-last" });
    const events: string[] = [];
    const onEvent = (event: { type: string }) => events.push(event.type);
    const agent = new Poller({ runtime: new Runtime({ provider: model, maxIterations: 100 }) });
    let turn = await agent.runTurn({ input: "deploy api" }, { onEvent });
    for (let resumes = 0; turn.status === "paused" && resumes < 30; resumes++) {
      // The continuation as JSON: what a server or another process would hold.
      turn = await agent.resumeTurn(JSON.parse(JSON.stringify(turn.continuation)), { approve: true, onEvent });
    }
    expect(events).toContain("loop-warning");
    expect(events).toContain("loop-block");
    // Blocked once 20 identical calls have run, as within one run: the tool ran 20 times, not 30.
    expect(Poller.runs).toBe(20);
  });

  it("a loop warning queued in a step that pauses for approval reaches the model when the turn resumes, once", async () => {
    class Ops extends ChatAgent {
      static methodOptions = {
        status: { tool: true, description: "Service status." },
        deploy: { tool: true, description: "Deploy.", requiresApproval: true },
      };
      status(): string {
        return "pending";
      }
      deploy(n: number): string {
        return `deploy ${n} queued`;
      }
    }
    const model = new ScriptedProvider(
      [(_request: ModelRequest, index: number) => ({ toolCalls: [{ name: "status", input: {} }, { name: "deploy", input: { n: index } }] })],
      { whenExhausted: "repeat-last" },
    );
    const warnings: string[] = [];
    const onEvent = (event: { type: string; name?: string }) => {
      if (event.type === "loop-warning") warnings.push(event.name!);
    };
    const agent = new Ops({ runtime: new Runtime({ provider: model, maxIterations: 100 }) });
    let turn = await agent.runTurn({ input: "ship it" }, { onEvent });
    for (let resumes = 0; turn.status === "paused" && resumes < 16; resumes++) {
      turn = await agent.resumeTurn(JSON.parse(JSON.stringify(turn.continuation)), { approve: true, onEvent });
    }
    expect(warnings).toContain("status");
    const shown = model.requests.filter((request) => texts(request).some((text) => text.startsWith("WARNING:") && text.includes("status")));
    expect(shown.length).toBeGreaterThan(0);
    // Reported once per bucket, as within one run: resuming does not report the same warning again.
    expect(warnings.length).toBeLessThan(3);
  });

  it("the circuit breaker counts blocks across resumes: after maxBlockedCalls blocked calls the resumed turn ends with ToolLoopError, not paused again", async () => {
    class Poller extends ChatAgent {
      static methodOptions = { deploy: { tool: true, description: "Deploy the service.", requiresApproval: true } };
      static runs = 0;
      deploy(service: string): string {
        Poller.runs++;
        return `${service}: pending`;
      }
    }
    const model = new ScriptedProvider([{ toolCalls: [{ name: "deploy", input: { service: "api" } }] }], { whenExhausted: "repeat-last" });
    const blocks: string[] = [];
    const onEvent = (event: { type: string }) => {
      if (event.type === "loop-block") blocks.push(event.type);
    };
    const agent = new Poller({ runtime: new Runtime({ provider: model, maxIterations: 100 }) });
    let turn = await agent.runTurn({ input: "deploy api" }, { onEvent });
    let resumes = 0;
    for (; turn.status === "paused" && resumes < 40; resumes++) {
      turn = await agent.resumeTurn(JSON.parse(JSON.stringify(turn.continuation)), { approve: true, onEvent });
    }
    // 20 runs, then one block per resume (the blocked call's result goes back, the model asks again, the turn pauses on it):
    // the third block ends the run, as within one run (maxBlockedCalls 3).
    expect(Poller.runs).toBe(20);
    expect(blocks).toHaveLength(3);
    expect(turn.status).not.toBe("paused");
    expect(turn.error).toBeInstanceOf(ToolLoopError);
  });
});

