import type OpenAI from "openai";
import type { ContentBlock, ModelResponse, ModelStreamEvent, StopReason, Usage } from "@rein/core";
import { parseToolArguments } from "../shared/parse-tool-arguments";

type FinishReason = OpenAI.ChatCompletion.Choice["finish_reason"];

/** Maps a whole Chat Completions response to Rein's normalized turn. */
export function fromChatCompletion(completion: OpenAI.ChatCompletion): ModelResponse {
  const choice = completion.choices[0];
  const content: ContentBlock[] = [];
  const text = choice?.message.content ?? choice?.message.refusal ?? "";
  if (text !== "") content.push({ type: "text", text });
  for (const call of choice?.message.tool_calls ?? []) {
    if (call.type !== "function") continue;
    content.push({ type: "tool_use", id: call.id, name: call.function.name, ...parseToolArguments(call.function.arguments) });
  }
  return {
    content,
    stopReason: choice?.message.refusal ? "refusal" : toStopReason(choice?.finish_reason ?? null),
    usage: toUsage(completion.usage),
    model: completion.model,
  };
}

function toUsage(usage: OpenAI.CompletionUsage | null | undefined): Usage {
  return {
    inputTokens: usage?.prompt_tokens ?? 0,
    outputTokens: usage?.completion_tokens ?? 0,
    cachedInputTokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
    cacheCreationInputTokens: usage?.prompt_tokens_details?.cache_write_tokens ?? 0,
  };
}

function toStopReason(reason: FinishReason | null): StopReason {
  switch (reason) {
    case "stop":
      return "end_turn";
    case "tool_calls":
    case "function_call":
      return "tool_use";
    case "length":
      return "max_tokens";
    case "content_filter":
      return "refusal";
    default:
      return "other";
  }
}

interface ToolCallInProgress {
  id: string;
  name: string;
  arguments: string;
}

/**
 * Assembles a streamed Chat Completions response. Tool calls arrive as
 * fragments keyed by `index`: the first carries the id and name, the rest
 * pieces of the arguments text, cut anywhere (some servers send a whole call
 * in one chunk instead).
 */
export class ChatStreamAssembler {
  private text = "";
  private refusal = "";
  private readonly toolCalls = new Map<number, ToolCallInProgress>();
  private finishReason: FinishReason | null = null;
  private usage: OpenAI.CompletionUsage | null | undefined;
  private model: string | undefined;

  /** Takes one chunk and returns the Rein events it produces. */
  push(chunk: OpenAI.ChatCompletionChunk): ModelStreamEvent[] {
    const events: ModelStreamEvent[] = [];
    this.model ??= chunk.model;
    // With stream_options.include_usage the last chunk has usage and no choices.
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices[0];
    if (choice === undefined) return events;
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    const delta = choice.delta;
    if (delta.content) {
      this.text += delta.content;
      events.push({ type: "text-delta", text: delta.content });
    }
    if (delta.refusal) this.refusal += delta.refusal;
    for (const fragment of delta.tool_calls ?? []) {
      let call = this.toolCalls.get(fragment.index);
      if (call === undefined) {
        call = { id: fragment.id ?? `call_${fragment.index}`, name: fragment.function?.name ?? "", arguments: "" };
        this.toolCalls.set(fragment.index, call);
        events.push({ type: "tool-call-start", id: call.id, name: call.name });
      }
      const argumentsDelta = fragment.function?.arguments;
      if (argumentsDelta) {
        call.arguments += argumentsDelta;
        events.push({ type: "tool-call-delta", id: call.id, argumentsDelta });
      }
    }
    return events;
  }

  /** The assembled turn, once the stream has ended. */
  finish(): ModelResponse {
    const content: ContentBlock[] = [];
    const text = this.text !== "" ? this.text : this.refusal;
    if (text !== "") content.push({ type: "text", text });
    for (const index of [...this.toolCalls.keys()].sort((a, b) => a - b)) {
      const call = this.toolCalls.get(index)!;
      content.push({ type: "tool_use", id: call.id, name: call.name, ...parseToolArguments(call.arguments) });
    }
    return {
      content,
      stopReason: this.refusal !== "" ? "refusal" : toStopReason(this.finishReason),
      usage: toUsage(this.usage),
      model: this.model,
    };
  }
}
