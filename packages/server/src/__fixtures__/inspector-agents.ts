import { Agent, Runtime, ScriptedProvider, type ModelRequest, type TurnResult } from "rein";
import type { Entries, EntryInit } from "../entries";
import { WaitingProvider } from "./waiting-provider";

/** What {@link Deployer.deploy} did, in order (reset by tests). */
export const deployments: string[] = [];

/** The text of the latest tool result the model was sent, if any. */
function lastToolResult(request: ModelRequest): string | undefined {
  const last = request.messages[request.messages.length - 1];
  const block = last?.content.find((item) => item.type === "tool_result");
  return block === undefined ? undefined : JSON.stringify(block);
}

/**
 * A model that asks to deploy once, then reports what the tool said: a
 * request whose last turn carries a tool result is answered with it.
 */
export const deployModel = new ScriptedProvider(
  [
    (request) => {
      const result = lastToolResult(request);
      if (result !== undefined) return { text: `tool said: ${result}`, usage: { inputTokens: 11, outputTokens: 4 } };
      return { toolCalls: [{ name: "deploy", input: { service: "api" } }], usage: { inputTokens: 20, outputTokens: 6 } };
    },
  ],
  { whenExhausted: "repeat-last", recordRequests: false },
);

/** A class entry with a `requiresApproval` tool and no approver of its own: the server's approver answers. */
export class Deployer extends Agent {
  static runtime = new Runtime({ provider: deployModel });
  static methodOptions = { deploy: { tool: true, requiresApproval: true, description: "Deploy a service." } };
  deploy(service: string): string {
    deployments.push(service);
    return `deployed ${service}`;
  }
  async ship(task: string): Promise<string> {
    return this.ask(task);
  }
}

/**
 * An agent whose `deploy` needs approval and which has no approver: its
 * turn (on the server's session) pauses and returns its continuation (the
 * `pause` entry is a factory, which passes the server's approver to no one).
 */
export class PausingDeployer extends Agent {
  static runtime = new Runtime({ provider: deployModel });
  static methodOptions = { deploy: { tool: true, requiresApproval: true, description: "Deploy a service." } };
  deploy(service: string): string {
    deployments.push(service);
    return `deployed ${service}`;
  }
  async operate(task: string): Promise<TurnResult> {
    return this.runTurn({ input: task });
  }
}

/** An agent whose model never answers until its run is cancelled. */
export class Waiter extends Agent {
  async question(task: string): Promise<string> {
    return this.ask(task);
  }
}

/** A quick class entry: one model request, answered at once. */
export class Quick extends Agent {
  // A tool method: its own requests carry the situational guidance (do not call research from inside research).
  static methodOptions = { research: { tool: true, description: "Research a task." } };
  static runtime = new Runtime({ provider: new ScriptedProvider([{ text: "quick answer", usage: { inputTokens: 30, outputTokens: 12 } }], { whenExhausted: "repeat-last", recordRequests: false }) });
  async research(task: string): Promise<string> {
    return this.ask(task);
  }
}

/** A model that ignores the situational guidance: inside `dig` it calls `dig` again, for ever. */
export class Digger extends Agent {
  static methodOptions = { dig: { tool: true, description: "Dig into a topic." } };
  static runtime = new Runtime({ provider: new ScriptedProvider([{ toolCalls: [{ name: "dig", input: { topic: "deeper" } }] }], { whenExhausted: "repeat-last", recordRequests: false }) });
  async dig(topic: string): Promise<string> {
    return this.ask(`dig into ${topic}`);
  }
}

/** The providers the `wait` entry made, newest last (a test awaits `aborted`). */
export const waitingProviders: WaitingProvider[] = [];

/** The entries of the inspector tests. */
export const inspectorEntries = {
  ship: [Deployer, "ship"],
  quick: [Quick, "research"],
  dig: [Digger, "dig"],
  pause: [() => new PausingDeployer(), "operate"],
  wait: [
    ({ onEvent }: EntryInit) => {
      const provider = new WaitingProvider();
      waitingProviders.push(provider);
      return new Waiter({ runtime: new Runtime({ provider, onEvent }) });
    },
    "question",
  ],
} satisfies Entries;
