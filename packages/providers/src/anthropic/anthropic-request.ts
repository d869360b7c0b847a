import type Anthropic from "@anthropic-ai/sdk";
import type { ContentBlock, ImageBlock, Message, ModelRequest, TextBlock, ToolChoice } from "@rein/core";

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

/**
 * Maps a normalized request to Messages API parameters. Anthropic caches the
 * prompt in the order tools → system → messages, so one cache breakpoint on the
 * last system block caches the whole constant prefix; user turns never carry
 * one, so the situational prefix and Context blocks never move the breakpoint.
 */
export function toAnthropicParams(request: ModelRequest, options: AnthropicRequestOptions): MessageParams {
  const tools = request.tools.map(
    (tool): Anthropic.Messages.Tool => ({
      name: tool.name,
      description: tool.description,
      input_schema: { type: "object", ...tool.parameters },
    }),
  );
  const system: TextBlockParam[] = request.system === "" ? [] : [{ type: "text", text: request.system }];
  if (options.promptCaching) {
    // Without a system text the breakpoint goes on the last tool, which still caches the tools.
    if (system.length > 0) system[system.length - 1] = { ...system[system.length - 1], cache_control: ephemeral };
    else if (tools.length > 0) tools[tools.length - 1] = { ...tools[tools.length - 1], cache_control: ephemeral };
  }

  const params: MessageParams = {
    model: request.model ?? options.modelId,
    max_tokens: request.maxOutputTokens ?? options.maxOutputTokens,
    messages: request.messages.map(toMessageParam),
  };
  if (system.length > 0) params.system = system;
  if (tools.length > 0) params.tools = tools;
  if (request.toolChoice !== undefined) params.tool_choice = toToolChoice(request.toolChoice);
  if (request.effort !== undefined) params.output_config = { effort: request.effort };
  return params;
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

function toToolChoice(choice: ToolChoice): Anthropic.Messages.ToolChoice {
  if (choice === "auto") return { type: "auto" };
  if (choice === "none") return { type: "none" };
  if (choice === "required") return { type: "any" };
  return { type: "tool", name: choice.name };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
