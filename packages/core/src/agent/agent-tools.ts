import type { Tool } from "../tools/tool";
import type { AgentOptions, AgentToolEntry } from "./agent-options";
import type { ClassInfo } from "./class-setup";
import { methodTool } from "./method-tool";
import type { ScopeOwner } from "../scope/scope-owner";

/**
 * The agent's `tool: true` methods as tools bound to `agent`, by method
 * name, with the instance's `methodOptions` over the class's.
 * @internal
 */
export function methodTools(agent: ScopeOwner, classInfo: ClassInfo, options: AgentOptions): Map<string, Tool> {
  const tools = new Map<string, Tool>();
  const overrides = options.methodOptions ?? {};
  for (const method of classInfo.methods.values()) {
    const override = overrides[method.name];
    const merged = override === undefined ? method.options : { ...method.options, ...override };
    if (!merged.tool || method.tool === undefined) continue;
    tools.set(method.name, methodTool(agent, { ...method, options: merged }, options.approveToolCall));
  }
  return tools;
}

/**
 * The tools a `tools` list names: tool objects as they are, strings as the
 * agent's own tool methods.
 * @throws {TypeError} naming the agent and its tool methods, for a string that names none
 * @internal
 */
export function resolveToolEntries(agentName: string, entries: readonly AgentToolEntry[], own: ReadonlyMap<string, Tool>): Tool[] {
  return entries.map((entry) => {
    if (typeof entry !== "string") return entry;
    const tool = own.get(entry);
    if (tool === undefined) {
      throw new TypeError(`${agentName} has no tool method named '${entry}' (its tool methods: ${[...own.keys()].join(", ") || "none"})`);
    }
    return tool;
  });
}
