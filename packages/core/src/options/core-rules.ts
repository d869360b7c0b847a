import { resolveLoopDetectionConfig, type LoopDetectionOptions } from "@rein/guard";
import { Context } from "../context/context";
import { optionSchema } from "@rein/session";

const { anyOf, arrayOf, hasMethods, instanceOf, isObject, nonEmptyString, object, oneOf, required, rule } = optionSchema;
type Rule = optionSchema.Rule;

/**
 * Rules for the values Rein's options share (tools, content, toolChoice,
 * signals…), used by the schemas of several entries. Class checks take a
 * thunk so this module can load in the middle of an import cycle.
 */

/** A model id. */
export const modelId: Rule = rule("a model id (a non-empty string)", (value) => typeof value === "string" && value !== "", "string");

/** `"low" | "medium" | "high"`. */
export const effort: Rule = oneOf("low", "medium", "high");

/** A tool object as `tool()` or `agent.asTools()` make it (duck-typed: `spec.name` and `execute`). */
export const toolObject: Rule = rule(
  "a tool (from tool() or agent.asTools())",
  (value) => isObject(value) && typeof value["execute"] === "function" && isObject(value["spec"]) && typeof value["spec"]["name"] === "string",
  "object",
);

/** An array of tool objects. */
export const toolList: Rule = arrayOf(toolObject, "an array of tools");

/** An agent's tools: tool objects or names of its `tool: true` methods. */
export const agentToolList: Rule = arrayOf(
  anyOf([toolObject, rule("a tool-method name", (value) => typeof value === "string" && value !== "", "string")], "a tool or a tool-method name"),
  "an array of tools or tool-method names",
);

const CONTENT_TYPES = new Set(["image", "tool_use", "tool_result"]);

/** One content block: `{ type: "text", text }`, an image, tool_use or tool_result block. */
export const contentBlock: Rule = rule(
  'a content block ({ type: "text", text } or an image, tool_use or tool_result block)',
  (value) => isObject(value) && (value["type"] === "text" ? typeof value["text"] === "string" : CONTENT_TYPES.has(value["type"] as string)),
  "object",
);

/** What a user turn holds: a prompt string or content blocks. */
export const content: Rule = anyOf(
  [rule("a string", (value) => typeof value === "string", "string"), arrayOf(contentBlock, "an array of content blocks")],
  "a string or an array of content blocks",
);

/** `"auto" | "none" | "required" | { type: "tool", name }`. */
export const toolChoice: Rule = anyOf(
  [oneOf("auto", "none", "required"), object({ type: required(oneOf("tool")), name: required(nonEmptyString) }, '{ type: "tool", name }')],
  '"auto", "none", "required" or { type: "tool", name }',
);

/** An `AbortSignal` (duck-typed, so polyfills pass). */
export const abortSignal: Rule = rule(
  "an AbortSignal",
  (value) => isObject(value) && typeof value["aborted"] === "boolean" && typeof value["addEventListener"] === "function",
  "object",
);

/** A {@link Context}. */
export const context: Rule = instanceOf(() => Context, "a Context");

/** A Runtime, or anything with its `exec` method. */
export const runtime: Rule = hasMethods("a Runtime (an object with an exec method)", "exec");

/** Loop-detection settings: an object; the guard's `resolveLoopDetectionConfig` checks the fields. */
export const loopDetection: Rule = rule("loop-detection settings (an object)", isObject, "object");

/** A model provider, or anything with its `complete` method. */
export const provider: Rule = hasMethods("a model provider (an object with a complete method)", "complete");

/** Surfaces the guard's loop-detection `TypeError`s at construction rather than at the first request. */
export function checkLoopDetection(owner: string, settings: LoopDetectionOptions): void {
  try {
    resolveLoopDetectionConfig(settings);
  } catch (error) {
    // The guard's message already names the loopDetection option ("Invalid loopDetection option 'enabled': …"): say whose it is.
    if (error instanceof TypeError) throw new TypeError(`${error.message} (in the ${owner} options)`, { cause: error });
    throw error;
  }
}
