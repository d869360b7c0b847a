import { GuardError, ModelBehaviorError, ToolApprovalError } from "@rein/guard";
import { Runtime } from "../runtime/runtime";
import { ScriptedProvider } from "../model/scripted-provider";
import { Agent } from "./agent";
import type { ToolApprover } from "./method-tool";

class Deployer extends Agent {
  static methodOptions = { deploy: { tool: true, requiresApproval: true, description: "Deploy a service." } };
  deployed: string[] = [];
  deploy(service: string) {
    this.deployed.push(service);
    return `deployed ${service}`;
  }
}

function deployTool(agent: Deployer) {
  return agent.asTools().find((tool) => tool.spec.name === "deploy")!;
}

describe("requiresApproval tool calls", () => {
  it("throws ToolApprovalError (model behaviour, not a guard refusal) when the approver says no; the method does not run", async () => {
    const calls: Parameters<ToolApprover>[0][] = [];
    const agent = new Deployer({ approveToolCall: (call) => (calls.push(call), false) });
    const error = await deployTool(agent)
      .execute({ service: "api" })
      .catch((caught: unknown) => caught);
    expect(ToolApprovalError.isInstance(error)).toBe(true);
    expect(ModelBehaviorError.isInstance(error)).toBe(true);
    expect(GuardError.isInstance(error)).toBe(false);
    expect(error).toMatchObject({ name: "ToolApprovalError", toolName: "deploy", approverConfigured: true });
    expect((error as Error).message).toBe("calling 'deploy' requires approval and it was not approved");
    expect(calls).toEqual([{ toolName: "deploy", args: { service: "api" } }]);
    expect(agent.deployed).toEqual([]);
  });

  it("says no approveToolCall is configured when the agent has none", async () => {
    const agent = new Deployer();
    const error = await deployTool(agent)
      .execute({ service: "api" })
      .catch((caught: unknown) => caught);
    expect(ToolApprovalError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ toolName: "deploy", approverConfigured: false });
    expect((error as Error).message).toBe(
      "calling 'deploy' requires approval and it was not approved (no approveToolCall was configured on the agent)",
    );
    expect(agent.deployed).toEqual([]);
  });

  it("runs the method when approved", async () => {
    const agent = new Deployer({ approveToolCall: async () => true });
    await expect(deployTool(agent).execute({ service: "api" })).resolves.toBe("deployed api");
    expect(agent.deployed).toEqual(["api"]);
  });

  it("a run cancelled while its approver decides: the late yes is ignored, the method never runs, and the approver saw the call's signal fire", async () => {
    let answer!: (approved: boolean) => void;
    let asked!: (signal: AbortSignal | undefined) => void;
    const question = new Promise<AbortSignal | undefined>((resolve) => (asked = resolve));
    const model = new ScriptedProvider([{ toolCalls: [{ name: "deploy", input: { service: "api" } }] }, "done"]);
    const agent = new Deployer({
      runtime: new Runtime({ provider: model }),
      approveToolCall: (call) => {
        asked(call.signal);
        return new Promise<boolean>((resolve) => (answer = resolve));
      },
    });
    const controller = new AbortController();
    const run = agent.ask("Deploy api.", { signal: controller.signal }).catch((caught: unknown) => caught);
    const signal = await question;
    controller.abort(new Error("operator pressed Stop"));
    expect(signal?.aborted).toBe(true);
    answer(true);
    expect(await run).toMatchObject({ message: "operator pressed Stop" });
    // Give the late answer every chance to reach the method.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(agent.deployed).toEqual([]);
  });
});
