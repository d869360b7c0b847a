import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import { ScriptedProvider } from "../model/scripted-provider";
import { InMemorySessionStore } from "@rein/session";
import { Runtime } from "./runtime";
import type { RunEvent } from "./runtime-events";
import { withRunListener } from "./run-listener";

class Lookup extends Agent {
  static methodOptions = { lookup: { tool: true, description: "Look a key up." } };
  lookup(key: string): string {
    return `value of ${key}`;
  }
  async research(question: string): Promise<string> {
    return this.ask(question);
  }
}

describe("withRunListener", () => {
  it("every run inside fn reports to the listener, once each, besides the runtime's own onEvent", async () => {
    const heard: RunEvent[] = [];
    const runtimeHeard: RunEvent[] = [];
    const model = new ScriptedProvider([{ toolCalls: [{ name: "lookup", input: { key: "k" } }] }, "done"]);
    const agent = new Lookup({ runtime: new Runtime({ provider: model, onEvent: (event) => runtimeHeard.push(event) }) });
    await expect(withRunListener((event) => heard.push(event), () => agent.research("q"))).resolves.toBe("done");
    expect(heard.map((event) => event.type)).toContain("tool-call");
    expect(heard.at(-1)).toMatchObject({ type: "run-finish", agent: "Lookup", result: { status: "completed" } });
    expect(heard).toEqual(runtimeHeard);
    expect(new Set(heard).size).toBe(heard.length);
  });

  it("its signal cancels the runs inside fn, even when the provider ignores it; running nodes end cancelled", async () => {
    const store = new InMemorySessionStore();
    const hanging = {
      specificationVersion: "rein-model-v1",
      providerId: "hanging",
      modelId: "hanging-1",
      complete: () => new Promise(() => undefined),
    } as never;
    class Slow extends Agent {
      async run(): Promise<string> {
        return this.ask("go");
      }
    }
    const controller = new AbortController();
    const agent = new Slow({ runtime: new Runtime({ provider: hanging }), context: Context.forSession(store, "s") });
    const running = withRunListener(() => undefined, () => agent.run(), { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("client went away")), 20);
    await expect(running).rejects.toThrow("client went away");
    expect(store.readNodes("s").find((node) => node.name === "Slow.run")!.metadata["status"]).toBe("cancelled");
  });

  it("bad arguments are a TypeError", () => {
    expect(() => withRunListener(42 as never, () => 1)).toThrow(TypeError);
    expect(() => withRunListener(() => undefined, 42 as never)).toThrow(TypeError);
  });
});
