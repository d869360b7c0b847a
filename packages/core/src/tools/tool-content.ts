import type { ImageBlock, TextBlock } from "../model/content";

const TOOL_CONTENT = Symbol.for("rein.ToolContent");

/**
 * A tool result that is more than text: the blocks (text and images) the
 * model sees as the tool's result, and an optional structured value kept for
 * recording and loop detection. MCP tools return one when a server answers
 * with images or structured content.
 * @example
 * ```ts
 * const screenshot = tool({
 *   name: "screenshot",
 *   description: "Capture the page.",
 *   execute: async () => new ToolContent([{ type: "image", source: { type: "base64", mediaType: "image/png", data } }]),
 * });
 * ```
 */
export class ToolContent {
  readonly [TOOL_CONTENT] = true;
  constructor(
    /** What the model sees, in order. */
    readonly blocks: readonly (TextBlock | ImageBlock)[],
    /** A structured value of the result (an MCP tool's `structuredContent`), when it has one. */
    readonly structured?: unknown,
  ) {}

  /** Whether `value` is a {@link ToolContent} (also from another copy of the package). */
  static isInstance(value: unknown): value is ToolContent {
    return typeof value === "object" && value !== null && (value as { [TOOL_CONTENT]?: unknown })[TOOL_CONTENT] === true;
  }

  /** The record of the result: its blocks and structured value (what session nodes and loop detection see). */
  toJSON(): { blocks: readonly (TextBlock | ImageBlock)[]; structured?: unknown } {
    return this.structured === undefined ? { blocks: this.blocks } : { blocks: this.blocks, structured: this.structured };
  }
}

/** The blocks of a {@link ToolContent} value, else undefined (the value is shown as text). @internal */
export function toolContentBlocks(value: unknown): readonly (TextBlock | ImageBlock)[] | undefined {
  return ToolContent.isInstance(value) ? value.blocks : undefined;
}
