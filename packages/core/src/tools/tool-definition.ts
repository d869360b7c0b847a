/**
 * What `tool()` takes ({@link ToolDefinition}) and its schema, in one file:
 * tool.ts imports both, and nothing here imports back.
 */
import { optionSchema } from "@rein/session";
import { isStandardSchema, type ParametersSchema } from "./schema";

const { boolean, func, isObject, optionsSchema, positiveNumber, required, rule, string } = optionSchema;

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

/** {@link ToolDefinition}: what `tool()` takes. */
export const toolDefinitionSchema = optionsSchema<ToolDefinition<unknown, unknown>>("tool", {
  name: required(
    rule("a tool name: 1–64 letters, digits, '_' or '-'", (value) => typeof value === "string" && TOOL_NAME.test(value), "string"),
  ),
  description: required(string),
  parameters: rule(
    "a JSON Schema object or a zod (Standard Schema) schema",
    (value) => isObject(value) || isStandardSchema(value),
    "object",
  ),
  execute: required(func("a function (args, { signal }) => result")),
  poll: boolean,
  timeout: positiveNumber,
});

/** Throws a `TypeError` naming `where` when `name` is not a valid tool name. */
export function checkToolName(name: unknown, where: string): void {
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    throw new TypeError(`${where}: invalid tool name ${JSON.stringify(name)} — use 1–64 letters, digits, '_' or '-'`);
  }
}
