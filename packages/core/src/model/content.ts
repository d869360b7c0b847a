/** Plain text. */
export interface TextBlock {
  readonly type: "text";
  readonly text: string;
}

/** An image, inline (base64) or by URL. */
export interface ImageBlock {
  readonly type: "image";
  readonly source:
    | { readonly type: "base64"; readonly mediaType: string; readonly data: string }
    | { readonly type: "url"; readonly url: string };
}

/**
 * A tool call made by the model. `input` is the parsed arguments object.
 * When the model sent arguments that are not valid JSON, `input` holds the
 * raw text and `inputError` says what was wrong; the runtime answers such a
 * call with a tool error result instead of running the tool.
 */
export interface ToolUseBlock {
  readonly type: "tool_use";
  /** Provider-assigned call id, echoed back by the matching {@link ToolResultBlock}. */
  readonly id: string;
  readonly name: string;
  readonly input: unknown;
  readonly inputError?: string;
}

/** The answer to a {@link ToolUseBlock}, sent back to the model in the next user turn. */
export interface ToolResultBlock {
  readonly type: "tool_result";
  readonly toolUseId: string;
  readonly content: string | ReadonlyArray<TextBlock | ImageBlock>;
  /** True when the tool failed or was refused; the content says why. */
  readonly isError?: boolean;
}

/** Every normalized content block a message can hold. */
export type ContentBlock = TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock;

/** One turn of the conversation sent to the model. */
export interface Message {
  readonly role: "user" | "assistant";
  readonly content: readonly ContentBlock[];
}

/** Shorthand for a text block. */
export function textBlock(text: string): TextBlock {
  return { type: "text", text };
}

/** The concatenated text of the text blocks in `content`. */
export function textOf(content: readonly ContentBlock[]): string {
  let text = "";
  for (const block of content) if (block.type === "text") text += block.text;
  return text;
}
