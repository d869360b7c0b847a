import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "../runtime/runtime";
import { ChatAgent } from "./chat-agent";

/** Deploys only with a person's approval (no approver is configured: the turn pauses). */
class Deployer extends ChatAgent {
  static methodOptions = { deploy: { tool: true, description: "Deploy the service.", requiresApproval: true } };
  deploy(service: string): string {
    return `${service} deployed`;
  }
}

describe("a resumed turn's reach budget (docs/guard/reach.md, Paused turns)", () => {
  it("the deadline and the token budget are the resumed turn's own: time spent paused and tokens spent before the pause do not count against it", async () => {
    // The first answer uses 1,455 of 1,500 tokens; carried over, the next request (its input estimated) would cross them.
    const model = new ScriptedProvider([{ toolCalls: [{ name: "deploy", input: { service: "api" } }], usage: { inputTokens: 1_450 } }, "Deployed."]);
    const deployer = new Deployer({ runtime: new Runtime({ provider: model, reach: { timeoutMs: 1_000, maxTokens: 1_500 } }) });
    const paused = await deployer.chat("Deploy api.");
    expect(paused.status).toBe("paused");
    // A person takes longer than the run's whole deadline to answer.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const done = await deployer.resumeTurn(paused.continuation!, { approve: true });
    expect(done).toMatchObject({ status: "completed", text: "Deployed." });
    expect(model.requests).toHaveLength(2);
  });
});
