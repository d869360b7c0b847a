import type { ToolDefinition } from "../tools/tool";
import { isStandardSchema } from "../tools/schema";
import { boolean, func, isObject, optionsSchema, positiveNumber, required, rule, string } from "./option-schema";

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

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
