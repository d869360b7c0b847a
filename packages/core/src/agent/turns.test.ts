import { Context } from "../context/context";
import { SessionMismatchError } from "@rein/guard";
import type { ModelRequest } from "../model/model-provider";
import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "../runtime/runtime";
import type { RunEvent } from "../runtime/runtime-events";
import { InMemorySessionStore } from "@rein/session";
import { Agent } from "./agent";
import { ChatAgent } from "./chat-agent";

/** Answers with the user texts it was sent, joined: what history and steering reached the model. */
function echo(): ScriptedProvider {
  return new ScriptedProvider(
    [
      (request: ModelRequest) =>
        request.messages
          .filter((message) => message.role === "user")
          .flatMap((message) => message.content)
          .flatMap((block) => (block.type === "text" ? [block.text] : []))
          .join(" | "),
    ],
    { whenExhausted: "repeat-last" },
  );
}

class Helper extends Agent {}

describe("agent.runTurn", () => {
  it("records the turn in the Context's session and reports status, text, usage, requests, session and head; the next turn continues it", async () => {
    const store = new InMemorySessionStore();
    const context = Context.forSession(store, "chat");
    const agent = new Helper({ runtime: new Runtime({ provider: echo() }) });
    const first = await agent.runTurn({ input: "hello" }, { context });
    expect(first).toMatchObject({ status: "completed", text: "hello", requests: 1, sessionId: "chat" });
    expect(first.usage.inputTokens).toBeGreaterThan(0);
    expect(first.headId).toBe(store.head("chat"));
    const second = await agent.runTurn({ input: "again", sessionId: "chat" }, { context });
    expect(second.text).toBe("hello | again");
    expect(second.headId).toBe(store.head("chat"));
  });

  it("a request naming another session is a SessionMismatchError naming both, before anything is created or sent", async () => {
    const store = new InMemorySessionStore();
    const model = echo();
    const context = Context.forSession(store, "chat");
    const agent = new Helper({ runtime: new Runtime({ provider: model }) });
    const error = await agent.runTurn({ input: "hi", sessionId: "other" }, { context }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SessionMismatchError);
    expect((error as Error).message).toMatch(/'other'.*'chat'/);
    expect(store.readNodes("chat")).toEqual([]);
    expect(store.hasSession("other")).toBe(false);
    expect(model.requests).toHaveLength(0);
  });

  it("headId continues after that node: a branch", async () => {
    const store = new InMemorySessionStore();
    const context = Context.forSession(store, "chat");
    const agent = new Helper({ runtime: new Runtime({ provider: echo() }) });
    const first = await agent.runTurn({ input: "one" }, { context });
    await agent.runTurn({ input: "two" }, { context });
    const branch = await agent.runTurn({ input: "two-bis", headId: first.headId! }, { context });
    expect(branch.text).toBe("one | two-bis");
    expect(store.listBranches("chat")).toHaveLength(2);
  });

  it("a turn that fails resolves with its status, error, and the requests it made", async () => {
    const model = new ScriptedProvider([{ toolCalls: [{ name: "missing" }] }, { toolCalls: [{ name: "missing" }] }], { whenExhausted: "repeat-last" });
    const agent = new Helper({ runtime: new Runtime({ provider: model, maxIterations: 2 }) });
    const turn = await agent.runTurn({ input: "go" });
    expect(turn).toMatchObject({ status: "error", text: "", requests: 2 });
    expect(String(turn.error)).toMatch(/maxIterations|2 model requests/i);
  });

  it("onEvent receives the turn's events", async () => {
    const events: RunEvent[] = [];
    await new Helper({ runtime: new Runtime({ provider: echo() }) }).runTurn({ input: "hi" }, { onEvent: (event) => events.push(event) });
    expect(events.map((event) => event.type)).toContain("text-delta");
    expect(events.at(-1)).toMatchObject({ type: "run-finish", agent: "Helper" });
  });

  it("bad arguments are a TypeError naming the field", async () => {
    const agent = new Helper({ runtime: new Runtime({ provider: echo() }) });
    await expect(agent.runTurn({} as never)).rejects.toThrow(/input/);
    await expect(agent.runTurn({ input: "x", sessionId: 7 } as never)).rejects.toThrow(/sessionId/);
  });
});

describe("agent.steer", () => {
  it("joins the next model request's user turn, after the tool results: never mid-tool", async () => {
    class Planner extends Agent {
      static methodOptions = { research: { tool: true, description: "Research." } };
      research(): string {
        this.steer("Keep it under 500 euros.");
        return "found three hotels";
      }
    }
    const model = new ScriptedProvider([{ toolCalls: [{ name: "research" }] }, "Booked the cheapest."]);
    const planner = new Planner({ runtime: new Runtime({ provider: model }) });
    await planner.runTurn({ input: "Plan the trip." });
    expect(JSON.stringify(model.requests[0]!.messages)).not.toContain("500 euros");
    const last = model.requests[1]!.messages.at(-1)!;
    expect(last.role).toBe("user");
    expect(last.content.map((block) => block.type)).toEqual(["tool_result", "text"]);
    expect(last.content[1]).toMatchObject({ type: "text", text: "Keep it under 500 euros." });
  });

  it("an empty text is a TypeError", () => {
    expect(() => new Helper().steer("  ")).toThrow(TypeError);
  });
});

describe("ChatAgent", () => {
  it("with no Context keeps one session of its own across its turns", async () => {
    class Assistant extends ChatAgent {}
    const assistant = new Assistant({ runtime: new Runtime({ provider: echo() }) });
    const first = await assistant.chat("I'm Ada.");
    const second = await assistant.chat("What's my name?");
    expect(second.text).toBe("I'm Ada. | What's my name?");
    expect(second.sessionId).toBe(first.sessionId);
    expect(first.sessionId).toMatch(/^chat-/);
  });

  it("with a Context on a store uses its session; an overriding chat starts a turn, not a scoped call", async () => {
    const store = new InMemorySessionStore();
    class Polite extends ChatAgent {
      override chat(message: string) {
        return super.chat(`${message} please`);
      }
    }
    const polite = new Polite({ runtime: new Runtime({ provider: echo() }), context: Context.forSession(store, "s") });
    const turn = await polite.chat("help");
    expect(turn).toMatchObject({ text: "help please", sessionId: "s" });
    // Only the turn's own nodes: no code node for Polite.chat.
    expect(store.readNodes("s").map((node) => node.role)).toEqual(["llm"]);
  });
});
