import { Runtime } from "../runtime/runtime";
import { Agent } from "./agent";
import { agentFunctionOptionsSchema, type AgentFunctionOptions, type AskOptions } from "./agent-options";

export type { AgentFunctionOptions } from "./agent-options";

/**
 * Runs one prompt through a model-tool loop without defining a class.
 * Inside a running call it joins that call's execution (guards, step
 * budget, session); otherwise it is standalone.
 *
 * @example
 * ```ts
 * const summary = await agent("Summarize the report.", { instructions: "Be brief.", tools: [search] });
 * ```
 */
export function agent(prompt: string, options: AgentFunctionOptions = {}): Promise<string> {
  agentFunctionOptionsSchema.parse(options);
  const { provider, toolChoice, maxIterations, signal, ...agentOptions } = options;
  if (provider !== undefined && agentOptions.runtime !== undefined) {
    throw new TypeError("agent(): pass either provider or runtime, not both");
  }
  const runtime = provider !== undefined ? new Runtime({ provider }) : agentOptions.runtime;
  const instance = new Agent({ ...agentOptions, runtime, tools: agentOptions.tools ?? [] });
  const overrides: AskOptions = {};
  if (toolChoice !== undefined) overrides.toolChoice = toolChoice;
  if (maxIterations !== undefined) overrides.maxIterations = maxIterations;
  if (signal !== undefined) overrides.signal = signal;
  return instance.ask(prompt, overrides);
}
