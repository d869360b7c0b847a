import type { ModelProvider } from "../model/model-provider";
import { Runtime } from "../runtime/runtime";
import { agentFunctionOptionsSchema } from "../options/agent-options-schema";
import { Agent, type AgentOptions, type AskOptions } from "./agent";

/** Options of the standalone {@link agent} function: agent settings, per-call settings, and optionally a provider. */
export interface AgentFunctionOptions extends Omit<AgentOptions, "methodOptions" | "execution">, Omit<AskOptions, keyof AgentOptions> {
  /** Shorthand for `runtime: new Runtime({ provider })`. */
  provider?: ModelProvider;
}

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
