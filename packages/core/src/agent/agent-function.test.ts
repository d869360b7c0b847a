import { RecursionError } from "@rein/guard";
import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "../runtime/runtime";
import { tool } from "../tools/tool";
import { Agent } from "./agent";
import { agent } from "./agent-function";

describe("agent() without a class", () => {
  it("runs one prompt through a model-tool loop with the given instructions and tools", async () => {
    const model = new ScriptedProvider([{ toolCalls: [{ name: "add", input: { a: 2, b: 3 } }] }, "2 + 3 = 5"]);
    const add = tool({
      name: "add",
      description: "Add two numbers.",
      parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
      execute: ({ a, b }: { a: number; b: number }) => a + b,
    });
    const answer = await agent("What is 2 + 3?", { provider: model, instructions: "Use the tools.", tools: [add], model: "m" });
    expect(answer).toBe("2 + 3 = 5");
    expect(model.requests[0]).toMatchObject({ system: "Use the tools.", model: "m" });
    expect(model.requests[1].messages[2].content[0]).toMatchObject({ type: "tool_result", content: "5" });
  });

  it("offers no tools unless given, and rejects provider together with runtime", async () => {
    const model = new ScriptedProvider(["ok"]);
    await agent("hi", { provider: model });
    expect(model.requests[0].tools).toEqual([]);
    expect(() => agent("hi", { provider: model, runtime: new Runtime({ provider: model }) })).toThrow("either provider or runtime");
  });

  it("inside a running call it joins that call's execution (and its guards)", async () => {
    const model = new ScriptedProvider([{ toolCalls: [{ name: "delegate", input: { task: "t" } }] }], { whenExhausted: "repeat-last" });
    class Boss extends Agent {
      static methodOptions = { delegate: { tool: true, description: "Delegate a task." } };
      async delegate(task: string): Promise<string> {
        // A standalone agent() whose tool calls the boss again: the guards see one chain.
        return agent(`do ${task}`, { provider: model, tools: this.asTools() });
      }
    }
    await expect(new Boss({ runtime: new Runtime({ provider: model }) }).delegate("t")).rejects.toBeInstanceOf(RecursionError);
    expect(model.requests.length).toBeLessThanOrEqual(7);
  });
});
