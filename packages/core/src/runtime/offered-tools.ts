import { deniedTools } from "@rein/guard";
import type { Tool } from "../tools/tool";

/**
 * The tools offered to the model: those given, minus the names a guard
 * frame's deny list withholds. Only these can run (see executeToolCall).
 * @internal
 */
export function offeredTools(tools: readonly Tool[]): { offered: Map<string, Tool>; withheld: Set<string> } {
  const offered = toolMap(tools);
  const withheld = new Set<string>();
  for (const name of deniedTools()) {
    if (offered.delete(name)) withheld.add(name);
  }
  return { offered, withheld };
}

function toolMap(tools: readonly Tool[]): Map<string, Tool> {
  const map = new Map<string, Tool>();
  for (const tool of tools) {
    if (map.has(tool.spec.name)) {
      throw new TypeError(`Two tools are named '${tool.spec.name}'; tool names must be unique within one request`);
    }
    map.set(tool.spec.name, tool);
  }
  return map;
}
