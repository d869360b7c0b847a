import type Anthropic from "@anthropic-ai/sdk";
import type { ContentBlock, ImageBlock, Message, ModelRequest, ResponseFormat, TextBlock } from "@rein/core";

type MessageParams = Anthropic.Messages.MessageCreateParamsNonStreaming;
type ContentBlockParam = Anthropic.Messages.ContentBlockParam;
type ImageBlockParam = Anthropic.Messages.ImageBlockParam;
type TextBlockParam = Anthropic.Messages.TextBlockParam;

/** How the request is built beyond what the {@link ModelRequest} says. */
export interface AnthropicRequestOptions {
  readonly modelId: string;
  readonly maxOutputTokens: number;
  readonly promptCaching: boolean;
}

const ephemeral = { type: "ephemeral" } as const;

/** How many user turns, counted from the end, get a rolling cache breakpoint on their last block. */
const rollingBreakpoints = 2;

/**
 * Maps a normalized request to Messages API parameters.
 *
 * Prompt caching: Anthropic caches the prompt in the order tools → system →
 * messages, up to each `cache_control` breakpoint (at most 4 per request).
 * The adapter sets up to three: one on the last system block (or the last
 * tool when there is no system text), which caches the constant prefix, and
 * a rolling one on the last block of each of the last two user turns. The
 * newest one writes the conversation so far to the cache; the one before
 * sits exactly where the previous request wrote, so that request's cache is
 * read however many blocks the last step added (Anthropic looks back only
 * about 20 blocks from a breakpoint for an earlier cache entry).
 *
 * Structured output (`responseFormat`): a tool named after the format, with
 * the schema as its `input_schema`, goes last in the tool list; it is forced
 * (`tool_choice: { type: "tool" }`) when the request offers no other tool,
 * when `toolChoice` is `"none"` (no tool calls: the answer now), or when
 * `toolChoice` names the format's tool. The response maps its call back to
 * a text block (see `fromAnthropicMessage`).
 */
export function toAnthropicParams(request: ModelRequest, options: AnthropicRequestOptions): MessageParams {
  const format = request.responseFormat;
  if (format !== undefined && request.tools.some((tool) => tool.name === format.name)) {
    throw new TypeError(
      `AnthropicProvider: responseFormat.name ${JSON.stringify(format.name)} is also the name of a tool; ` +
        `rename one of them (the format is sent as a tool of that name)`,
    );
  }
  const tools = request.tools.map(
    (tool): Anthropic.Messages.Tool => ({
      name: tool.name,
      description: tool.description,
      input_schema: { type: "object", ...tool.parameters },
    }),
  );
  if (format !== undefined) tools.push(toFormatTool(format));
  const system: TextBlockParam[] = request.system === "" ? [] : [{ type: "text", text: request.system }];
  const messages = request.messages.map(toMessageParam);
  if (options.promptCaching) {
    // Without a system text the breakpoint goes on the last tool, which still caches the tools.
    if (system.length > 0) system[system.length - 1] = { ...system[system.length - 1], cache_control: ephemeral };
    else if (tools.length > 0) tools[tools.length - 1] = { ...tools[tools.length - 1], cache_control: ephemeral };
    markLastUserTurns(messages);
  }

  const params: MessageParams = {
    model: request.model ?? options.modelId,
    max_tokens: request.maxOutputTokens ?? options.maxOutputTokens,
    messages,
  };
  if (system.length > 0) params.system = system;
  if (tools.length > 0) params.tools = tools;
  const toolChoice = toToolChoice(request, format);
  if (toolChoice !== undefined) params.tool_choice = toolChoice;
  if (request.effort !== undefined) params.output_config = { effort: request.effort };
  return params;
}

/** The description of the tool that carries a structured final answer. */
export function formatToolDescription(format: ResponseFormat): string {
  return (
    `Give your final answer by calling this tool once, with the answer as its input: ` +
    `a JSON value matching the schema of "${format.name}". Call it only when you are done.`
  );
}

function toFormatTool(format: ResponseFormat): Anthropic.Messages.Tool {
  return { name: format.name, description: formatToolDescription(format), input_schema: { type: "object", ...format.schema } };
}

function markLastUserTurns(messages: Anthropic.Messages.MessageParam[]): void {
  let marked = 0;
  for (let index = messages.length - 1; index >= 0 && marked < rollingBreakpoints; index--) {
    const message = messages[index];
    if (message.role !== "user" || !Array.isArray(message.content) || message.content.length === 0) continue;
    const content = [...message.content];
    content[content.length - 1] = withBreakpoint(content[content.length - 1]);
    messages[index] = { ...message, content };
    marked++;
  }
}

function withBreakpoint(block: ContentBlockParam): ContentBlockParam {
  // Thinking blocks take no cache_control; they never end a user turn anyway.
  if (block.type === "thinking" || block.type === "redacted_thinking") return block;
  return { ...block, cache_control: ephemeral } as ContentBlockParam;
}

function toMessageParam(message: Message): Anthropic.Messages.MessageParam {
  return { role: message.role, content: message.content.map(toContentBlockParam) };
}

function toContentBlockParam(block: ContentBlock): ContentBlockParam {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "image":
      return toImageParam(block);
    case "tool_use":
      return {
        type: "tool_use",
        id: block.id,
        name: block.name,
        // The API only accepts an object here; a malformed call is echoed with no
        // arguments, and its tool_result already tells the model what was wrong.
        input: block.inputError === undefined && isObject(block.input) ? block.input : {},
      };
    case "tool_result":
      return {
        type: "tool_result",
        tool_use_id: block.toolUseId,
        content: typeof block.content === "string" ? block.content : block.content.map(toResultPart),
        ...(block.isError ? { is_error: true } : {}),
      };
  }
}

function toResultPart(part: TextBlock | ImageBlock): TextBlockParam | ImageBlockParam {
  return part.type === "text" ? { type: "text", text: part.text } : toImageParam(part);
}

function toImageParam(block: ImageBlock): ImageBlockParam {
  const source = block.source;
  if (source.type === "url") return { type: "image", source: { type: "url", url: source.url } };
  return {
    type: "image",
    source: {
      type: "base64",
      media_type: source.mediaType as Anthropic.Messages.Base64ImageSource["media_type"],
      data: source.data,
    },
  };
}

function toToolChoice(request: ModelRequest, format: ResponseFormat | undefined): Anthropic.Messages.ToolChoice | undefined {
  const choice = request.toolChoice;
  if (format !== undefined) {
    const asksForAnswer =
      request.tools.length === 0 || choice === "none" || (typeof choice === "object" && choice.name === format.name);
    if (asksForAnswer) return { type: "tool", name: format.name };
  }
  if (choice === undefined) return undefined;
  if (choice === "auto") return { type: "auto" };
  if (choice === "none") return { type: "none" };
  if (choice === "required") return { type: "any" };
  return { type: "tool", name: choice.name };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
