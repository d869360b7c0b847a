/**
 * Where turns meet resumption, steering, pausing and history filters (found
 * by an attack review, 2026-12-03): each case failed before its fix.
 */
import { InMemorySessionStore } from "@rein/session";
import { Agent } from "./agent";
import { ChatAgent } from "./chat-agent";
import { Context } from "../context/context";
import type { ModelRequest } from "../model/model-provider";
import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "../runtime/runtime";

const toolUseIds = (r: ModelRequest): string[] => r.messages.flatMap((m) => m.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : [])));
const resultIds = (r: ModelRequest): string[] => r.messages.flatMap((m) => m.content.flatMap((b) => (b.type === "tool_result" ? [b.toolUseId] : [])));
const texts = (r: ModelRequest): string[] => r.messages.flatMap((m) => m.content.flatMap((b) => (b.type === "text" ? [b.text] : [])));

class Operator extends ChatAgent {
  static methodOptions = {
    check: { tool: true, description: "Check the service." },
    deploy: { tool: true, description: "Deploy the service.", requiresApproval: true },
  };
  check(service: string): string {
    return `${service} is healthy`;
  }
  deploy(service: string): string {
    return `${service} deployed`;
  }
}

describe("a resumed turn re-sends the paused assistant turn once", () => {
  it("approval after a call that already ran: each tool_use id and each result appears once", async () => {
    const model = new ScriptedProvider([
      { toolCalls: [{ name: "check", input: { service: "api" } }, { name: "deploy", input: { service: "api" } }] },
      "done",
    ]);
    const op = new Operator({ runtime: new Runtime({ provider: model }) });
    const paused = await op.chat("Deploy api.");
    expect(paused.status).toBe("paused");
    expect(await op.resumeTurn(paused.continuation!, { approve: true })).toMatchObject({ status: "completed" });
    const resumed = model.requests[1]!;
    expect(toolUseIds(resumed)).toEqual(["call_1", "call_2"]); // got ["call_1", "call_1", "call_2"]
    expect(resultIds(resumed)).toEqual(["call_1", "call_2"]); // got ["call_1", "call_1", "call_2"]
  });

  it("agent.pause(): the step's exchange is not sent twice", async () => {
    const model = new ScriptedProvider([{ toolCalls: [{ name: "check", input: { service: "api" } }] }, "done"]);
    const op = new Operator({ runtime: new Runtime({ provider: model }) });
    const running = op.chat("Check api.");
    op.pause();
    const paused = await running;
    expect(paused.status).toBe("paused");
    await op.resumeTurn(paused.continuation!, {});
    expect(toolUseIds(model.requests[1]!)).toEqual(["call_1"]); // got ["call_1", "call_1"]
    expect(resultIds(model.requests[1]!)).toEqual(["call_1"]);
  });
});

describe("steer() joins the turn's next request, never one made inside a tool call", () => {
  it("a tool that asks its own agent does not take the turn's steered input", async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let entered!: () => void;
    const inTool = new Promise<void>((resolve) => (entered = resolve));
    class Planner extends ChatAgent {
      static methodOptions = { lookup: { tool: true, description: "Look something up." } };
      async lookup(): Promise<string> {
        entered();
        await gate;
        return this.ask("sub-question", { tools: [] });
      }
    }
    const model = new ScriptedProvider([{ toolCalls: [{ name: "lookup", input: {} }] }, "sub answer", "final"]);
    const planner = new Planner({ runtime: new Runtime({ provider: model }) });
    const turn = planner.chat("Plan the trip.");
    await inTool; // the turn is in the middle of a tool call
    planner.steer("Keep it under 500 euros.");
    open();
    expect((await turn).status).toBe("completed");
    expect(texts(model.requests[1]!)).not.toContain("Keep it under 500 euros."); // the nested request inside lookup got it
    expect(texts(model.requests[2]!)).toContain("Keep it under 500 euros."); // the turn's next request did not
  });
});

describe("pause() asked of a turn that then finishes does not pause a later turn", () => {
  it("the next, unrelated turn completes", async () => {
    const model = new ScriptedProvider(["first answer", { toolCalls: [{ name: "check", input: { service: "api" } }] }, "second answer"]);
    const op = new Operator({ runtime: new Runtime({ provider: model }) });
    const first = op.chat("one");
    op.pause(); // the running turn answers without another safe point
    expect((await first).status).toBe("completed");
    expect((await op.chat("two")).status).toBe("completed"); // got "paused"
  });
});

describe("a resumed turn keeps its own input under a history filter", () => {
  for (const historyFilter of [false, "current_call"] as const) {
    it(`historyFilter: ${String(historyFilter)}`, async () => {
      class Deployer extends Agent {
        static methodOptions = { deploy: { tool: true, description: "Deploy.", requiresApproval: true } };
        deploy(service: string): string {
          return `${service} deployed`;
        }
      }
      const model = new ScriptedProvider([{ toolCalls: [{ name: "deploy", input: { service: "api" } }] }, "done"]);
      const context = new Context({}, { parent: Context.forSession(new InMemorySessionStore(), "s1"), historyFilter });
      const agent = new Deployer({ runtime: new Runtime({ provider: model }), context });
      const paused = await agent.runTurn({ input: "Deploy api please." }, { context });
      expect(paused.status).toBe("paused");
      await agent.resumeTurn(paused.continuation!, { approve: true, context });
      expect(texts(model.requests[1]!)).toContain("Deploy api please."); // gone
      expect(model.requests[1]!.messages[0]!.role).toBe("user"); // got "assistant"
    });
  }
});

describe("pause() is for the turns it was asked of", () => {
  it("asked before any turn: the next turn takes it; if that turn ends without a safe point, a later turn is not paused", async () => {
    const model = new ScriptedProvider(["first answer", { toolCalls: [{ name: "check", input: { service: "api" } }] }, "second answer"]);
    const op = new Operator({ runtime: new Runtime({ provider: model }) });
    op.pause();
    expect((await op.chat("one")).status).toBe("completed");
    expect((await op.chat("two")).status).toBe("completed");
  });

  it("asked while two turns run: both pause", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let inside = 0;
    let bothIn!: () => void;
    const both = new Promise<void>((resolve) => (bothIn = resolve));
    class Op extends Agent {
      static methodOptions = { check: { tool: true, description: "Check." } };
      async check(): Promise<string> {
        if (++inside === 2) bothIn();
        await gate;
        return "ok";
      }
    }
    const model = new ScriptedProvider([{ toolCalls: [{ name: "check", input: {} }] }], { whenExhausted: "repeat-last" });
    const op = new Op({ runtime: new Runtime({ provider: model, maxIterations: 5 }) });
    const first = op.runTurn({ input: "one" }, { context: Context.forSession(new InMemorySessionStore(), "a") });
    const second = op.runTurn({ input: "two" }, { context: Context.forSession(new InMemorySessionStore(), "b") });
    await both;
    op.pause();
    release();
    expect((await Promise.all([first, second])).map((turn) => turn.status)).toEqual(["paused", "paused"]);
  });
});
