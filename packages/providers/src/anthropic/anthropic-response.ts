import type Anthropic from "@anthropic-ai/sdk";
import type { ContentBlock, ModelResponse, ModelStreamEvent, StopReason, Usage } from "@rein/core";
import { parseToolArguments } from "../shared/parse-tool-arguments";

/** Maps a whole Messages API response to Rein's normalized turn. */
export function fromAnthropicMessage(message: Anthropic.Messages.Message): ModelResponse {
  const content: ContentBlock[] = [];
  for (const block of message.content) {
    if (block.type === "text") content.push({ type: "text", text: block.text });
    else if (block.type === "tool_use") content.push({ type: "tool_use", id: block.id, name: block.name, input: block.input });
  }
  return {
    content,
    stopReason: toStopReason(message.stop_reason),
    usage: toUsage(message.usage),
    model: message.model,
  };
}

/**
 * Anthropic's `input_tokens` counts only the uncached part of the prompt;
 * Rein's `inputTokens` is the whole prompt, as OpenAI reports it, so the two
 * providers' numbers compare.
 */
function toUsage(usage: {
  input_tokens: number | null;
  output_tokens: number;
  cache_read_input_tokens: number | null;
  cache_creation_input_tokens: number | null;
}): Usage {
  const cachedInputTokens = usage.cache_read_input_tokens ?? 0;
  const cacheCreationInputTokens = usage.cache_creation_input_tokens ?? 0;
  return {
    inputTokens: (usage.input_tokens ?? 0) + cachedInputTokens + cacheCreationInputTokens,
    outputTokens: usage.output_tokens,
    cachedInputTokens,
    cacheCreationInputTokens,
  };
}

function toStopReason(reason: Anthropic.Messages.StopReason | null): StopReason {
  switch (reason) {
    case "end_turn":
    case "tool_use":
    case "max_tokens":
    case "stop_sequence":
    case "refusal":
      return reason;
    // The output was cut off because the context window filled up: a truncated turn, like max_tokens.
    case "model_context_window_exceeded":
      return "max_tokens";
    default:
      return "other";
  }
}

type BlockInProgress =
  | { readonly type: "text"; text: string }
  | { readonly type: "tool_use"; readonly id: string; readonly name: string; json: string };

/**
 * Assembles a streamed Messages API response: text deltas and the
 * `input_json_delta` fragments of each tool call, by content-block index.
 */
export class AnthropicStreamAssembler {
  private readonly blocks = new Map<number, BlockInProgress>();
  private message: Anthropic.Messages.Message | undefined;
  private stopReason: Anthropic.Messages.StopReason | null = null;
  private usage: Parameters<typeof toUsage>[0] = {
    input_tokens: 0,
    output_tokens: 0,
    cache_read_input_tokens: null,
    cache_creation_input_tokens: null,
  };

  /** Takes one server-sent event and returns the Rein events it produces. */
  push(event: Anthropic.Messages.RawMessageStreamEvent): ModelStreamEvent[] {
    switch (event.type) {
      case "message_start":
        this.message = event.message;
        this.usage = { ...event.message.usage };
        return [];
      case "content_block_start": {
        const block = event.content_block;
        if (block.type === "text") {
          this.blocks.set(event.index, { type: "text", text: block.text });
          return block.text === "" ? [] : [{ type: "text-delta", text: block.text }];
        }
        if (block.type === "tool_use") {
          this.blocks.set(event.index, { type: "tool_use", id: block.id, name: block.name, json: "" });
          return [{ type: "tool-call-start", id: block.id, name: block.name }];
        }
        return [];
      }
      case "content_block_delta": {
        const block = this.blocks.get(event.index);
        if (block?.type === "text" && event.delta.type === "text_delta") {
          block.text += event.delta.text;
          return [{ type: "text-delta", text: event.delta.text }];
        }
        if (block?.type === "tool_use" && event.delta.type === "input_json_delta") {
          block.json += event.delta.partial_json;
          return [{ type: "tool-call-delta", id: block.id, argumentsDelta: event.delta.partial_json }];
        }
        return [];
      }
      case "message_delta":
        this.stopReason = event.delta.stop_reason ?? this.stopReason;
        // message_delta usage is cumulative; fields it leaves null keep their message_start value.
        this.usage = {
          input_tokens: event.usage.input_tokens ?? this.usage.input_tokens,
          output_tokens: event.usage.output_tokens,
          cache_read_input_tokens: event.usage.cache_read_input_tokens ?? this.usage.cache_read_input_tokens,
          cache_creation_input_tokens:
            event.usage.cache_creation_input_tokens ?? this.usage.cache_creation_input_tokens,
        };
        return [];
      default:
        return [];
    }
  }

  /** The assembled turn, once the stream has ended. */
  finish(): ModelResponse {
    const content: ContentBlock[] = [];
    for (const index of [...this.blocks.keys()].sort((a, b) => a - b)) {
      const block = this.blocks.get(index)!;
      if (block.type === "text") {
        if (block.text !== "") content.push({ type: "text", text: block.text });
      } else {
        content.push({ type: "tool_use", id: block.id, name: block.name, ...parseToolArguments(block.json) });
      }
    }
    return {
      content,
      stopReason: toStopReason(this.stopReason),
      usage: toUsage(this.usage),
      model: this.message?.model,
    };
  }
}
