import type OpenAI from "openai";
import type { Message, ModelRequest, ToolChoice } from "@rein/core";
import { serializeToolArguments } from "../shared/parse-tool-arguments";
import { answerNowChoice, imageUrlOf } from "./chat-completions-request";

type ResponseParams = OpenAI.Responses.ResponseCreateParamsNonStreaming;
type InputItem = OpenAI.Responses.ResponseInputItem;
type UserPart = OpenAI.Responses.ResponseInputText | OpenAI.Responses.ResponseInputImage;

/**
 * Maps a normalized request to Responses API parameters: the system text as
 * `instructions`, the history as input items (messages, `function_call` and
 * `function_call_output`), and `store: false`, because Rein sends the whole
 * history on every request and keeps no server-side conversation.
 * `cacheKey` becomes `prompt_cache_key`; `responseFormat` becomes `text:
 * { format: { type: "json_schema", name, schema, strict } }` (`strict`
 * defaults to true).
 */
export function toResponseParams(request: ModelRequest, modelId: string): ResponseParams {
  const params: ResponseParams = {
    model: request.model ?? modelId,
    input: request.messages.flatMap(toInputItems),
    store: false,
  };
  if (request.system !== "") params.instructions = request.system;
  if (request.tools.length > 0) {
    params.tools = request.tools.map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters: { ...tool.parameters },
      // Strict mode demands every property be required and no extra ones allowed,
      // which ordinary tool schemas do not promise.
      strict: false,
    }));
  }
  const toolChoice = answerNowChoice(request);
  if (toolChoice !== undefined) params.tool_choice = toResponseToolChoice(toolChoice);
  if (request.maxOutputTokens !== undefined) params.max_output_tokens = request.maxOutputTokens;
  if (request.temperature !== undefined) params.temperature = request.temperature;
  if (request.effort !== undefined) params.reasoning = { effort: request.effort };
  if (request.cacheKey !== undefined) params.prompt_cache_key = request.cacheKey;
  if (request.responseFormat !== undefined) {
    const { name, schema, strict } = request.responseFormat;
    params.text = { format: { type: "json_schema", name, schema: { ...schema }, strict: strict ?? true } };
  }
  return params;
}

function toInputItems(message: Message): InputItem[] {
  if (message.role === "assistant") {
    const items: InputItem[] = [];
    for (const block of message.content) {
      if (block.type === "text") items.push({ role: "assistant", content: block.text });
      else if (block.type === "tool_use") {
        items.push({
          type: "function_call",
          call_id: block.id,
          name: block.name,
          arguments: serializeToolArguments(block.input, block.inputError),
        });
      }
    }
    return items;
  }
  // Function outputs answer the calls of the previous turn, so they come first;
  // the rest of the user turn follows as one message, its blocks in order.
  const outputs: InputItem[] = [];
  const parts: UserPart[] = [];
  for (const block of message.content) {
    if (block.type === "tool_result") {
      outputs.push({
        type: "function_call_output",
        call_id: block.toolUseId,
        output:
          typeof block.content === "string"
            ? block.content
            : block.content.map((part) =>
                part.type === "text"
                  ? { type: "input_text" as const, text: part.text }
                  : { type: "input_image" as const, image_url: imageUrlOf(part) },
              ),
      });
    } else if (block.type === "text") {
      parts.push({ type: "input_text", text: block.text });
    } else if (block.type === "image") {
      parts.push({ type: "input_image", image_url: imageUrlOf(block), detail: "auto" });
    }
  }
  if (parts.length === 0) return outputs;
  return [...outputs, { role: "user", content: parts }];
}

function toResponseToolChoice(choice: ToolChoice): ResponseParams["tool_choice"] {
  if (typeof choice === "string") return choice;
  return { type: "function", name: choice.name };
}
