import type { Frame } from "@rein/guard";
import { ToolArgumentsError } from "../errors/core-errors";
import type { ToolSpec } from "../model/model-provider";
import { resolveSchema, type ParametersSchema, type ResolvedSchema } from "./schema";
import { enterFunctionScope } from "../scope/enter-scope";
import { toolDefinitionSchema } from "../options/tool-definition-schema";

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Options passed to a tool's `execute` by the runtime. */
export interface ToolExecuteOptions {
  readonly signal?: AbortSignal;
  /**
   * A paused turn's resume approved this call (`resumeTurn(…, { approve: true })`):
   * a `requiresApproval` method runs without asking its approver.
   * @internal
   */
  readonly approved?: boolean;
}

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

/** What {@link tool} takes. */
export interface ToolDefinition<Args, Result> {
  /** 1–64 letters, digits, `_` or `-` (what every provider accepts). */
  name: string;
  description: string;
  /** JSON Schema of the arguments object, or a zod (Standard Schema) schema. @default no arguments */
  parameters?: ParametersSchema;
  /** Runs the tool with validated arguments. */
  execute: (args: Args, options: ToolExecuteOptions) => Result | Promise<Result>;
  /** Marks the tool as a poll tool for loop detection. @default false */
  poll?: boolean;
  /**
   * Milliseconds a call may run; then `options.signal` fires with a
   * `ToolTimeoutError` and the model gets a tool error. @default unlimited
   */
  timeout?: number;
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
  const frame: Frame = { key: `tool:${definition.name}:${++toolCounter}`, name: definition.name, kind: "tool" };
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
let toolCounter = 0;

/** Throws a `TypeError` naming `where` when `name` is not a valid tool name. */
export function checkToolName(name: unknown, where: string): void {
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    throw new TypeError(`${where}: invalid tool name ${JSON.stringify(name)} — use 1–64 letters, digits, '_' or '-'`);
  }
}

/** Validates tool arguments, throwing {@link ToolArgumentsError} that lists every problem. */
export async function validateArguments(toolName: string, schema: ResolvedSchema, args: unknown): Promise<unknown> {
  const result = await schema.validate(args ?? {});
  if (!result.ok) throw new ToolArgumentsError(toolName, result.problems);
  return result.value;
}
