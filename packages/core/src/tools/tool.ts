import type { Frame } from "@rein/guard";
import { ToolArgumentsError } from "@rein/guard";
import type { ToolSpec } from "../model/model-provider";
import { resolveSchema, type ResolvedSchema } from "./schema";
import { enterFunctionScope } from "../scope/enter-scope";
import { toolDefinitionSchema, type ToolDefinition, type ToolExecuteOptions } from "./tool-definition";

/**
 * A tool the model can call: its `spec` is what the model sees; `execute`
 * validates the arguments against the schema, then runs inside a guarded,
 * recorded call scope.
 */
export interface Tool {
  readonly spec: ToolSpec;
  /** True for tools whose repeated calls are polling (loop detection treats them as such). */
  readonly poll: boolean;
  /** Results longer than this are truncated before the model sees them. @default unlimited */
  readonly maxResultChars?: number;
  /**
   * Milliseconds a call may run: then its signal fires with a
   * `ToolTimeoutError`, the call's running nodes end `cancelled`, and the
   * model gets a tool error. @default unlimited
   */
  readonly timeout?: number;
  /** Validates `args` (throwing {@link ToolArgumentsError}) and runs the tool. */
  /**
   * The call needs a person's approval and no approver is configured: in a
   * turn (`runTurn`, `chat`) the turn pauses before it runs; elsewhere it
   * fails with `ToolApprovalError`.
   */
  readonly awaitsApproval?: boolean;
  execute(args: unknown, options?: ToolExecuteOptions): Promise<unknown>;
}

/**
 * Defines a tool from a plain function.
 *
 * @example
 * ```ts
 * const search = tool({
 *   name: "search",
 *   description: "Search the wiki.",
 *   parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
 *   execute: async ({ query }: { query: string }) => wiki.search(query),
 * });
 * ```
 */
export function tool<Args = Record<string, unknown>, Result = unknown>(definition: ToolDefinition<Args, Result>): Tool {
  toolDefinitionSchema.parse(definition);
  const schema = resolveSchema(definition.parameters ?? { type: "object", properties: {} }, `tool '${definition.name}'`);
  // Keyed by name, as a method tool is by its class and method: a tool made anew for each call is still the same
  // function to the recursion ceiling and cycle detection (the model calls it by that name).
  const frame: Frame = { key: `tool:${definition.name}`, name: definition.name, kind: "tool" };
  const info = { name: definition.name, doc: definition.description, expose: "full" as const, toolName: definition.name, isAsync: true };
  return {
    spec: { name: definition.name, description: definition.description, parameters: schema.jsonSchema },
    poll: definition.poll ?? false,
    timeout: definition.timeout,
    async execute(args, options = {}) {
      const value = await validateArguments(definition.name, schema, args);
      return enterFunctionScope(frame, info, undefined, definition.execute, undefined, [value as Args, options]);
    },
  };
}

/** Validates tool arguments, throwing {@link ToolArgumentsError} that lists every problem. */
export async function validateArguments(toolName: string, schema: ResolvedSchema, args: unknown): Promise<unknown> {
  const result = await schema.validate(args ?? {});
  if (!result.ok) throw new ToolArgumentsError(toolName, result.problems);
  return result.value;
}
