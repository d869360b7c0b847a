import type OpenAI from "openai";
import type { ContentBlock, ImageBlock, Message, ModelRequest, TextBlock, ToolChoice } from "@rein/core";
import { serializeToolArguments } from "../shared/parse-tool-arguments";

type ChatParams = OpenAI.ChatCompletionCreateParamsNonStreaming;
type ChatMessage = OpenAI.ChatCompletionMessageParam;
type UserPart = OpenAI.ChatCompletionContentPartText | OpenAI.ChatCompletionContentPartImage;

/**
 * Maps a normalized request to Chat Completions parameters. The system text
 * goes first as a `system` message (what OpenAI-compatible servers understand);
 * OpenAI caches the longest repeated prefix on its own, so the constant prefix
 * is cached without markers, and `cacheKey` becomes `prompt_cache_key`, which
 * routes a conversation's requests to the same cache. `responseFormat`
 * becomes `response_format: { type: "json_schema", json_schema: { name,
 * schema, strict } }` (`strict` defaults to true).
 */
export function toChatParams(request: ModelRequest, modelId: string): ChatParams {
  const messages: ChatMessage[] = request.system === "" ? [] : [{ role: "system", content: request.system }];
  for (const message of request.messages) messages.push(...toChatMessages(message));
  const params: ChatParams = { model: request.model ?? modelId, messages };
  if (request.tools.length > 0) {
    params.tools = request.tools.map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: { ...tool.parameters } },
    }));
  }
  const toolChoice = answerNowChoice(request);
  if (toolChoice !== undefined) params.tool_choice = toChatToolChoice(toolChoice);
  if (request.maxOutputTokens !== undefined) params.max_completion_tokens = request.maxOutputTokens;
  if (request.temperature !== undefined) params.temperature = request.temperature;
  if (request.effort !== undefined) params.reasoning_effort = request.effort;
  if (request.cacheKey !== undefined) params.prompt_cache_key = request.cacheKey;
  if (request.responseFormat !== undefined) {
    const { name, schema, strict } = request.responseFormat;
    params.response_format = { type: "json_schema", json_schema: { name, schema: { ...schema }, strict: strict ?? true } };
  }
  return params;
}

function toChatMessages(message: Message): ChatMessage[] {
  if (message.role === "assistant") return [toAssistantMessage(message.content)];
  // Tool results become `tool` messages, which must directly follow the assistant's
  // tool calls; the rest of the turn (text, images) follows them as one user message.
  const toolMessages: ChatMessage[] = [];
  const parts: UserPart[] = [];
  for (const block of message.content) {
    if (block.type === "tool_result") {
      const content = typeof block.content === "string" ? [{ type: "text" as const, text: block.content }] : block.content;
      const text = content.filter((part): part is TextBlock => part.type === "text").map((part) => part.text).join("\n");
      toolMessages.push({ role: "tool", tool_call_id: block.toolUseId, content: text });
      // A tool message carries text only; its images travel in the user message after it.
      for (const part of content) if (part.type === "image") parts.push(toImagePart(part));
    } else if (block.type === "text") {
      parts.push({ type: "text", text: block.text });
    } else if (block.type === "image") {
      parts.push(toImagePart(block));
    }
  }
  if (parts.length === 0) return toolMessages;
  return [...toolMessages, { role: "user", content: parts }];
}

function toAssistantMessage(content: readonly ContentBlock[]): ChatMessage {
  let text = "";
  const toolCalls: OpenAI.ChatCompletionMessageFunctionToolCall[] = [];
  for (const block of content) {
    if (block.type === "text") text += block.text;
    else if (block.type === "tool_use") {
      toolCalls.push({
        id: block.id,
        type: "function",
        function: { name: block.name, arguments: serializeToolArguments(block.input, block.inputError) },
      });
    }
  }
  return {
    role: "assistant",
    content: text === "" ? null : text,
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
  };
}

/** The data URL or URL OpenAI takes for an image. */
export function imageUrlOf(block: ImageBlock): string {
  const source = block.source;
  return source.type === "url" ? source.url : `data:${source.mediaType};base64,${source.data}`;
}

function toImagePart(block: ImageBlock): OpenAI.ChatCompletionContentPartImage {
  return { type: "image_url", image_url: { url: imageUrlOf(block) } };
}

/**
 * The request's tool choice, except one that names the response format's
 * "tool" (how a runtime asks any adapter for the final answer; Anthropic
 * carries the format as a tool): here the format is no tool, so that
 * becomes `"none"` (answer now, in the format), or nothing when no tool is
 * offered (the API takes no `tool_choice` without tools).
 */
export function answerNowChoice(request: ModelRequest): ToolChoice | undefined {
  const choice = request.toolChoice;
  const format = request.responseFormat;
  if (format === undefined || typeof choice !== "object" || choice.name !== format.name) return choice;
  return request.tools.length > 0 ? "none" : undefined;
}

function toChatToolChoice(choice: ToolChoice): OpenAI.ChatCompletionToolChoiceOption {
  if (typeof choice === "string") return choice;
  return { type: "function", function: { name: choice.name } };
}
