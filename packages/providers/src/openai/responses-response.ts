import type OpenAI from "openai";
import type { ContentBlock, ModelResponse, ModelStreamEvent, StopReason, Usage } from "@rein/core";
import { parseToolArguments } from "../shared/parse-tool-arguments";

type Response = OpenAI.Responses.Response;
type StreamEvent = OpenAI.Responses.ResponseStreamEvent;

/** Maps a whole Responses API response to Rein's normalized turn. */
export function fromResponse(response: Response): ModelResponse {
  const content: ContentBlock[] = [];
  let refused = false;
  for (const item of response.output) {
    if (item.type === "message") {
      for (const part of item.content) {
        const text = part.type === "output_text" ? part.text : part.refusal;
        refused ||= part.type === "refusal";
        if (text !== "") content.push({ type: "text", text });
      }
    } else if (item.type === "function_call") {
      content.push({ type: "tool_use", id: item.call_id, name: item.name, ...parseToolArguments(item.arguments) });
    }
  }
  return {
    content,
    stopReason: refused ? "refusal" : toStopReason(response, content),
    usage: toUsage(response.usage),
    model: response.model,
  };
}

function toUsage(usage: OpenAI.Responses.ResponseUsage | undefined): Usage {
  return {
    inputTokens: usage?.input_tokens ?? 0,
    outputTokens: usage?.output_tokens ?? 0,
    // Some OpenAI-compatible servers omit the details objects.
    cachedInputTokens: usage?.input_tokens_details?.cached_tokens ?? 0,
    cacheCreationInputTokens: usage?.input_tokens_details?.cache_write_tokens ?? 0,
  };
}

/** The Responses API has no stop reason: it is read from the status and the output. */
function toStopReason(response: Response, content: readonly ContentBlock[]): StopReason {
  if (response.status === "incomplete") {
    const reason = response.incomplete_details?.reason;
    return reason === "max_output_tokens" ? "max_tokens" : reason === "content_filter" ? "refusal" : "other";
  }
  if (content.some((block) => block.type === "tool_use")) return "tool_use";
  return response.status === "completed" || response.status === undefined ? "end_turn" : "other";
}

type ItemInProgress =
  | { readonly type: "text"; text: string }
  | { readonly type: "function_call"; readonly callId: string; readonly name: string; arguments: string };

/**
 * Assembles a streamed Responses API response from its output-item events:
 * text deltas per message item, argument deltas per function-call item (by
 * output index; the `call_id`, not the item id, is what the tool result echoes).
 */
export class ResponsesStreamAssembler {
  private readonly items = new Map<number, ItemInProgress>();
  private final: Response | undefined;

  /** Takes one event and returns the Rein events it produces. */
  push(event: StreamEvent): ModelStreamEvent[] {
    switch (event.type) {
      case "response.output_item.added": {
        const item = event.item;
        if (item.type === "function_call") {
          this.items.set(event.output_index, {
            type: "function_call",
            callId: item.call_id,
            name: item.name,
            arguments: item.arguments ?? "",
          });
          return [{ type: "tool-call-start", id: item.call_id, name: item.name }];
        }
        if (item.type === "message") this.items.set(event.output_index, { type: "text", text: "" });
        return [];
      }
      case "response.output_text.delta":
      case "response.refusal.delta": {
        const item = this.items.get(event.output_index);
        if (item?.type !== "text") return [];
        item.text += event.delta;
        return [{ type: "text-delta", text: event.delta }];
      }
      case "response.function_call_arguments.delta": {
        const item = this.items.get(event.output_index);
        if (item?.type !== "function_call") return [];
        item.arguments += event.delta;
        return [{ type: "tool-call-delta", id: item.callId, argumentsDelta: event.delta }];
      }
      case "response.function_call_arguments.done": {
        // The done event repeats the whole text; it wins if a delta went missing.
        const item = this.items.get(event.output_index);
        if (item?.type === "function_call") item.arguments = event.arguments;
        return [];
      }
      case "response.completed":
      case "response.incomplete":
        this.final = event.response;
        return [];
      default:
        return [];
    }
  }

  /** The assembled turn, once the stream has ended. */
  finish(): ModelResponse {
    const content: ContentBlock[] = [];
    for (const index of [...this.items.keys()].sort((a, b) => a - b)) {
      const item = this.items.get(index)!;
      if (item.type === "text") {
        if (item.text !== "") content.push({ type: "text", text: item.text });
      } else {
        content.push({ type: "tool_use", id: item.callId, name: item.name, ...parseToolArguments(item.arguments) });
      }
    }
    const refused = this.final?.output.some(
      (item) => item.type === "message" && item.content.some((part) => part.type === "refusal"),
    );
    return {
      content,
      stopReason: refused ? "refusal" : this.final ? toStopReason(this.final, content) : "other",
      usage: toUsage(this.final?.usage),
      model: this.final?.model,
    };
  }
}
