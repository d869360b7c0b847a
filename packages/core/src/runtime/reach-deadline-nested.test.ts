import { ReachExceededError, ReachPolicy } from "@rein/guard";
import { Agent } from "../agent/agent";
import type { ModelCallOptions, ModelRequest, ModelResponse } from "../model/model-provider";
import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "./runtime";
import type { RunEvent } from "./runtime-events";
import { withRunListener } from "./run-listener";

describe("reach: the deadline while a nested agent runs as a tool", () => {
  /** Never answers: waits on its signal, then fails as an SDK does. */
  class Unanswering extends ScriptedProvider {
    override async complete(request: ModelRequest, options?: ModelCallOptions): Promise<ModelResponse> {
      this.requests.push(request);
      const signal = options?.signal;
      return new Promise((_resolve, reject) => signal?.addEventListener("abort", () => reject(new Error("Request was aborted."))));
    }
  }

  it("the run's deadline firing first in the nested agent's request ends the run with it: the model is not told of a refusal", async () => {
    // The outer run's deadline, tightened by a reload once the tool has started (its call keeps the limit it started
    // with); the nested agent's request is cut off at the new deadline first. Without the reload the two timers of one
    // deadline race, and the nested one won 17 of 40 runs: the same refusal.
    const policy = new ReachPolicy({ timeoutMs: 60_000 });
    const inner = new Agent({ runtime: new Runtime({ provider: new Unanswering() }) });
    class Outer extends Agent {
      static methodOptions = { delegate: { tool: true, description: "Hand the task over." } };
      async delegate(): Promise<string> {
        policy.update({ timeoutMs: 1_000 });
        return inner.ask("Do the task.");
      }
    }
    const model = new ScriptedProvider([{ toolCalls: [{ name: "delegate", input: {} }] }, "done"]);
    const events: RunEvent[] = [];
    const agent = new Outer({ runtime: new Runtime({ provider: model, reach: policy }) });
    const error = await withRunListener((event) => void events.push(event), () => agent.ask("Go.")).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ReachExceededError);
    expect(error).toMatchObject({ dimension: "deadline" });
    // The run's time is up: that is no refusal of the call, the model is not told to answer without it.
    expect(events.filter((event) => event.type === "guard-refusal")).toEqual([]);
    expect(events.filter((event) => event.type === "tool-result" && event.agent === "Outer")).toEqual([]);
  });

  it("a nested agent's own, earlier deadline refuses that one call: the model is told and the outer run goes on", async () => {
    const inner = new Agent({ runtime: new Runtime({ provider: new Unanswering(), reach: { timeoutMs: 1_000 } }) });
    class Outer extends Agent {
      static methodOptions = { delegate: { tool: true, description: "Hand the task over." } };
      async delegate(): Promise<string> {
        return inner.ask("Do the task.");
      }
    }
    const model = new ScriptedProvider([{ toolCalls: [{ name: "delegate", input: {} }] }, "done without it"]);
    const events: RunEvent[] = [];
    const agent = new Outer({ runtime: new Runtime({ provider: model, reach: { timeoutMs: 60_000 } }) });
    const answer = await withRunListener((event) => void events.push(event), () => agent.ask("Go."));
    expect(answer).toBe("done without it");
    const refusals = events.filter((event) => event.type === "guard-refusal");
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ name: "delegate", error: { dimension: "deadline", limit: 1_000 }, aborted: false });
  });
});
