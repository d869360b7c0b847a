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
 * is cached without markers.
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
  if (request.toolChoice !== undefined) params.tool_choice = toChatToolChoice(request.toolChoice);
  if (request.maxOutputTokens !== undefined) params.max_completion_tokens = request.maxOutputTokens;
  if (request.temperature !== undefined) params.temperature = request.temperature;
  if (request.effort !== undefined) params.reasoning_effort = request.effort;
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

function toChatToolChoice(choice: ToolChoice): OpenAI.ChatCompletionToolChoiceOption {
  if (typeof choice === "string") return choice;
  return { type: "function", function: { name: choice.name } };
}
