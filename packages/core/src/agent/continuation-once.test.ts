/**
 * A paused turn's continuation is consumed once: however often, however
 * concurrently and from however many processes it is resumed, the approved
 * tool runs once and every other resume is a ContinuationConsumedError.
 */
import { Context } from "../context/context";
import { ContinuationConsumedError } from "@rein/guard";
import type { ModelRequest } from "../model/model-provider";
import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "../runtime/runtime";
import { InMemorySessionStore } from "@rein/session";
import { ChatAgent } from "./chat-agent";
import type { TurnContinuation } from "./turns";

let deployed = 0;

/** Deploys (which needs a person's approval) and reports the result. */
class Operator extends ChatAgent {
  static methodOptions = { deploy: { tool: true, description: "Deploy the service.", requiresApproval: true } };
  deploy(service: string): string {
    deployed++;
    return `${service} deployed`;
  }
}

function operatorRuntime(): Runtime {
  return new Runtime({
    provider: new ScriptedProvider(
      [
        { toolCalls: [{ name: "deploy", input: { service: "api" } }] },
        (request: ModelRequest) => `Done after ${request.messages.length} messages`,
      ],
      { whenExhausted: "repeat-last" },
    ),
  });
}

/** What a resumed turn's model says once the call was answered. */
function answeringRuntime(): Runtime {
  return new Runtime({ provider: new ScriptedProvider([(request: ModelRequest) => `Done after ${request.messages.length} messages`], { whenExhausted: "repeat-last" }) });
}

async function pausedTurn(store: InMemorySessionStore): Promise<TurnContinuation> {
  const operator = new Operator({ runtime: operatorRuntime(), context: Context.forSession(store, "ops") });
  const turn = await operator.runTurn({ input: "Deploy api." });
  expect(turn.status).toBe("paused");
  return JSON.parse(JSON.stringify(turn.continuation)) as TurnContinuation;
}

beforeEach(() => {
  deployed = 0;
});

describe("a continuation is consumed once", () => {
  it("a second resumeTurn of the same continuation is a ContinuationConsumedError; the approved tool ran once", async () => {
    const store = new InMemorySessionStore();
    store.createSession("ops");
    const continuation = await pausedTurn(store);
    expect(typeof continuation.id).toBe("string");
    const operator = new Operator({ runtime: answeringRuntime(), context: Context.forSession(store, "ops") });
    const first = await operator.resumeTurn(continuation, { approve: true });
    expect(first.status).toBe("completed");
    const second = await operator.resumeTurn(continuation, { approve: true }).catch((error: unknown) => error);
    expect(ContinuationConsumedError.isInstance(second)).toBe(true);
    expect((second as ContinuationConsumedError).name).toBe("ContinuationConsumedError");
    expect((second as Error).message).toContain(continuation.id!);
    expect(deployed).toBe(1);
  });

  it("two resumes at once: one goes on, the other is refused before anything runs", async () => {
    const store = new InMemorySessionStore();
    store.createSession("ops");
    const continuation = await pausedTurn(store);
    const agents = [0, 1].map(() => new Operator({ runtime: answeringRuntime(), context: Context.forSession(store, "ops") }));
    const outcomes = await Promise.allSettled(agents.map((agent) => agent.resumeTurn(continuation, { approve: true })));
    expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(1);
    const refused = outcomes.find((outcome) => outcome.status === "rejected") as PromiseRejectedResult;
    expect(ContinuationConsumedError.isInstance(refused.reason)).toBe(true);
    expect(deployed).toBe(1);
  });

  it("another process on the same store (a second copy of core, with nothing remembered in memory) is refused by the store", async () => {
    const store = new InMemorySessionStore();
    store.createSession("ops");
    const continuation = await pausedTurn(store);
    const operator = new Operator({ runtime: answeringRuntime(), context: Context.forSession(store, "ops") });
    await operator.resumeTurn(continuation, { approve: true });
    let elsewhere: unknown;
    await new Promise<void>((resolve) => {
      jest.isolateModules(() => {
        // A fresh module registry: this copy's agent, context and in-process memory know nothing of the first resume.
        const core = require("../index") as typeof import("../index");
        class OtherOperator extends core.ChatAgent {
          static methodOptions = { deploy: { tool: true, description: "Deploy the service.", requiresApproval: true } };
          deploy(service: string): string {
            deployed++;
            return `${service} deployed`;
          }
        }
        const other = new OtherOperator({
          runtime: new core.Runtime({ provider: new core.ScriptedProvider(["unused"], { whenExhausted: "repeat-last" }) }),
          context: core.Context.forSession(store as never, "ops"),
        });
        other
          .resumeTurn(continuation as never, { approve: true })
          .then(
            (result) => (elsewhere = result),
            (error: unknown) => (elsewhere = error),
          )
          .finally(resolve);
      });
    });
    expect(ContinuationConsumedError.isInstance(elsewhere)).toBe(true);
    expect(deployed).toBe(1);
  });

  it("a resume that answers no consumes the continuation too: approving it afterwards is refused", async () => {
    const store = new InMemorySessionStore();
    store.createSession("ops");
    const continuation = await pausedTurn(store);
    const operator = new Operator({ runtime: answeringRuntime(), context: Context.forSession(store, "ops") });
    expect((await operator.resumeTurn(continuation, { approve: false })).status).toBe("completed");
    await expect(operator.resumeTurn(continuation, { approve: true })).rejects.toMatchObject({ name: "ContinuationConsumedError" });
    expect(deployed).toBe(0);
  });
});
