/**
 * An Agent's own reach policy holds for a loop asked of it from outside it
 * (`ask`, `stream`, `choose`), as for its methods and turns: one agent
 * entry (found by an attack review, 2026-12-03; each failed before).
 */
import { ReachError } from "@rein/guard";
import { Agent } from "./agent";
import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "../runtime/runtime";

describe("an Agent's own reach policy holds for its ask(), stream() and choose() called from outside it", () => {
  const big = "x".repeat(4000); // ~1,000 estimated tokens

  it("top-level ask of an agent with reach: { maxTokens: 10 } is refused before the request", async () => {
    const model = new ScriptedProvider(["ok"]);
    const agent = new Agent({ runtime: new Runtime({ provider: model }), reach: { maxTokens: 10 } });
    const error = await agent.ask(big).catch((caught: unknown) => caught);
    expect(ReachError.isInstance(error)).toBe(true); // got "ok"
    expect(model.requests).toHaveLength(0);
  });

  it("stream() too", async () => {
    const model = new ScriptedProvider(["ok"]);
    const agent = new Agent({ runtime: new Runtime({ provider: model }), reach: { maxTokens: 10 } });
    expect((await agent.stream(big).result).status).toBe("error"); // got "completed"
    expect(model.requests).toHaveLength(0);
  });

  it("choose() too", async () => {
    const model = new ScriptedProvider(["a"]);
    const agent = new Agent({ runtime: new Runtime({ provider: model }), reach: { maxTokens: 10 } });
    const error = await agent.choose(big, ["a", "b"]).catch((caught: unknown) => caught);
    expect(ReachError.isInstance(error)).toBe(true);
    expect(model.requests).toHaveLength(0);
  });

  it("the agent's policy wins over the runtime's (docs/guard/reach.md)", async () => {
    const model = new ScriptedProvider(["ok"]);
    const agent = new Agent({ runtime: new Runtime({ provider: model, reach: { maxTokens: 1_000_000 } }), reach: { maxTokens: 10 } });
    const error = await agent.ask(big).catch((caught: unknown) => caught);
    expect(ReachError.isInstance(error)).toBe(true);
  });
});

describe("an ask or choose refused at its agent's entry answers like a method", () => {
  it("with the agent's fallback: a method delegating through sub.ask() under maxLogicDepth 1 gets the fallback's answer", async () => {
    const model = new ScriptedProvider(["full answer"]);
    const runtime = new Runtime({ provider: model });
    class Specialist extends Agent {
      static fallback = (task: { name: string }, error: Error) => `degraded ${task.name}: ${error.name}`;
    }
    class Careful extends Agent {
      static reach = { maxLogicDepth: 1 };
      async run(): Promise<unknown> {
        return new Specialist({ runtime }).ask("q");
      }
      async pick(): Promise<unknown> {
        return new Specialist({ runtime }).choose("which?", ["a", "b"]);
      }
    }
    expect(await new Careful({ runtime }).run()).toBe("degraded Specialist.ask: ReachExceededError");
    expect(await new Careful({ runtime }).pick()).toBe("degraded Specialist.choose: ReachExceededError");
    expect(model.requests).toHaveLength(0);
  });

  it("ask({ runtime }) is held to that runtime's reach policy when the agent has none of its own", async () => {
    const big = "x".repeat(4000);
    const model = new ScriptedProvider(["ok"]);
    const agent = new Agent({ runtime: new Runtime({ provider: model, reach: { maxTokens: 1_000_000 } }) });
    const strict = new Runtime({ provider: model, reach: { maxTokens: 10 } });
    const error = await agent.ask(big, { runtime: strict }).catch((caught: unknown) => caught);
    expect(ReachError.isInstance(error)).toBe(true);
    expect(model.requests).toHaveLength(0);
  });
});
