import { ModelBehaviorError } from "../errors/rein-error";

/**
 * Raised when the model calls a tool that does not exist. The runtime reports
 * it to the model as the call's result; {@link ToolLoopDetector} counts
 * repeated ones (`unknown_tool_repeat`).
 *
 * Model behaviour, not a guard refusal: it extends {@link ModelBehaviorError}
 * but not `GuardError`, so a tool that throws it is an ordinary tool failure
 * and never counts toward the runtime's refusal-then-abort rule.
 *
 * @example
 * ```ts
 * new UnknownToolError("web_search", ["search", "fetch"]).message;
 * // 'Tool "web_search" does not exist. Available tools: search, fetch. Call one of these or answer without a tool.'
 * ```
 */
export class UnknownToolError extends ModelBehaviorError {
  static {
    this.defineErrorName("UnknownToolError");
  }

  /** The name the model asked for. */
  readonly toolName: string;
  /** The names of the tools that do exist, in the order given. */
  readonly availableTools: readonly string[];

  constructor(toolName: string, availableTools: readonly string[], options?: { cause?: unknown }) {
    const available = availableTools.length > 0 ? `Available tools: ${availableTools.join(", ")}.` : "No tools are available.";
    const advice = availableTools.length > 0 ? "Call one of these or answer without a tool." : "Answer without a tool.";
    super(`Tool "${toolName}" does not exist. ${available} ${advice}`, options);
    this.toolName = toolName;
    this.availableTools = [...availableTools];
  }
}
