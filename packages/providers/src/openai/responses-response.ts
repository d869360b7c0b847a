import type { ContentBlock, ModelResponse, ModelStreamEvent, StopReason, Usage } from "@rein/core";
import { estimatedUsage } from "../shared/estimated-tokens";
import { parseToolArguments } from "../shared/parse-tool-arguments";
import { streamEndedEarly, WireShape } from "../shared/wire-shape";

type JsonObject = Record<string, unknown>;

/**
 * Maps a whole Responses API response to Rein's normalized turn, checking
 * its shape on the way: `output` and `usage` must be there; a malformed
 * body is a `ProviderError` naming the field.
 */
export function fromResponse(body: unknown): ModelResponse {
  const shape = new WireShape("openai", "response", body);
  return readResponse(shape, shape.root(), "");
}

function readResponse(shape: WireShape, response: JsonObject, at: string): ModelResponse {
  const content: ContentBlock[] = [];
  let refused = false;
  shape.array(response.output, `${at}output`).forEach((value, index) => {
    const path = `${at}output[${index}]`;
    const item = shape.object(value, path);
    const type = shape.string(item.type, `${path}.type`);
    if (type === "message") {
      shape.array(item.content, `${path}.content`).forEach((partValue, partIndex) => {
        const partPath = `${path}.content[${partIndex}]`;
        const part = shape.object(partValue, partPath);
        const partType = shape.string(part.type, `${partPath}.type`);
        if (partType !== "output_text" && partType !== "refusal") return;
        const text = partType === "output_text" ? shape.string(part.text, `${partPath}.text`) : shape.string(part.refusal, `${partPath}.refusal`);
        refused ||= partType === "refusal";
        if (text !== "") content.push({ type: "text", text });
      });
    } else if (type === "function_call") {
      content.push({
        type: "tool_use",
        id: shape.string(item.call_id, `${path}.call_id`),
        name: shape.string(item.name, `${path}.name`),
        ...parseToolArguments(shape.optionalString(item.arguments, `${path}.arguments`) ?? ""),
      });
    }
  });
  const status = shape.optionalString(response.status, `${at}status`);
  const incomplete = shape.optionalObject(response.incomplete_details, `${at}incomplete_details`);
  return {
    content,
    stopReason: refused ? "refusal" : toStopReason(status, shape.optionalString(incomplete?.reason, `${at}incomplete_details.reason`), content),
    usage: readUsage(shape, response.usage, `${at}usage`),
    model: shape.optionalString(response.model, `${at}model`),
  };
}

function readUsage(shape: WireShape, value: unknown, path: string): Usage {
  const usage = shape.object(value, path);
  // Some OpenAI-compatible servers omit the details objects.
  const details = shape.optionalObject(usage.input_tokens_details, `${path}.input_tokens_details`);
  return {
    inputTokens: shape.count(usage.input_tokens, `${path}.input_tokens`),
    outputTokens: shape.count(usage.output_tokens, `${path}.output_tokens`),
    cachedInputTokens: shape.optionalCount(details?.cached_tokens, `${path}.input_tokens_details.cached_tokens`) ?? 0,
    cacheCreationInputTokens:
      shape.optionalCount(details?.cache_write_tokens, `${path}.input_tokens_details.cache_write_tokens`) ?? 0,
  };
}

/** The Responses API has no stop reason: it is read from the status and the output. */
function toStopReason(status: string | undefined, incompleteReason: string | undefined, content: readonly ContentBlock[]): StopReason {
  if (status === "incomplete") {
    return incompleteReason === "max_output_tokens" ? "max_tokens" : incompleteReason === "content_filter" ? "refusal" : "other";
  }
  if (content.some((block) => block.type === "tool_use")) return "tool_use";
  return status === "completed" || status === undefined ? "end_turn" : "other";
}

type ItemInProgress =
  | { readonly type: "text"; text: string }
  | { readonly type: "function_call"; readonly callId: string; readonly name: string; arguments: string };

/**
 * Assembles a streamed Responses API response from its output-item events:
 * text deltas per message item, argument deltas per function-call item (by
 * output index; the `call_id`, not the item id, is what the tool result
 * echoes). Only a stream that reached `response.completed` (or
 * `response.incomplete`) makes a turn; each event's shape is checked.
 */
export class ResponsesStreamAssembler {
  private readonly items = new Map<number, ItemInProgress>();
  private final: { shape: WireShape; response: JsonObject } | undefined;
  private failed = false;
  private failedUsage: Usage | undefined;
  private events = 0;

  /** @param inputEstimate the input tokens the request is reckoned at, asked only for a stream cut before its end. */
  constructor(private readonly inputEstimate: () => number = () => 0) {}

  /**
   * What the provider bills for a stream that failed: the counts a
   * `response.failed` event reported (undefined when it reported none: the
   * server said the response failed, and what it bills is its word); for a
   * stream cut before any final event (OpenAI reports usage only there),
   * once an event arrived — the request was taken and the answer began —
   * the estimate of what was sent and what streamed (4 characters a token);
   * undefined before any event.
   */
  reportedUsage(): Usage | undefined {
    if (this.failed) return this.failedUsage;
    if (this.events === 0) return undefined;
    let written = 0;
    for (const item of this.items.values()) written += item.type === "text" ? item.text.length : item.name.length + item.arguments.length;
    return estimatedUsage(this.inputEstimate(), written);
  }

  /**
   * Reads the usage of a `response.failed` event, which the adapter then
   * throws as its typed error. Counts that are not counts are left out
   * rather than failing as a malformed event: the failure is what the
   * caller must hear, and nothing is charged that cannot be read.
   */
  pushFailed(value: unknown): void {
    this.events++;
    this.failed = true;
    const shape = new WireShape("openai", "stream event", value);
    try {
      const response = shape.optionalObject(shape.root().response, "response");
      this.failedUsage = response?.usage == null ? undefined : readUsage(shape, response.usage, "response.usage");
    } catch {
      this.failedUsage = undefined;
    }
  }

  /** Takes one event and returns the Rein events it produces. */
  push(value: unknown): ModelStreamEvent[] {
    this.events++;
    const shape = new WireShape("openai", "stream event", value);
    const event = shape.root();
    switch (shape.string(event.type, "type")) {
      case "response.output_item.added": {
        const index = shape.number(event.output_index, "output_index");
        const item = shape.object(event.item, "item");
        const type = shape.string(item.type, "item.type");
        if (type === "function_call") {
          const callId = shape.string(item.call_id, "item.call_id");
          const name = shape.string(item.name, "item.name");
          this.items.set(index, { type: "function_call", callId, name, arguments: shape.optionalString(item.arguments, "item.arguments") ?? "" });
          return [{ type: "tool-call-start", id: callId, name }];
        }
        if (type === "message") this.items.set(index, { type: "text", text: "" });
        return [];
      }
      case "response.output_text.delta":
      case "response.refusal.delta": {
        const item = this.items.get(shape.number(event.output_index, "output_index"));
        const delta = shape.string(event.delta, "delta");
        if (item?.type !== "text") return [];
        item.text += delta;
        return [{ type: "text-delta", text: delta }];
      }
      case "response.function_call_arguments.delta": {
        const item = this.items.get(shape.number(event.output_index, "output_index"));
        const delta = shape.string(event.delta, "delta");
        if (item?.type !== "function_call") return [];
        item.arguments += delta;
        return [{ type: "tool-call-delta", id: item.callId, argumentsDelta: delta }];
      }
      case "response.function_call_arguments.done": {
        // The done event repeats the whole text; it wins if a delta went missing.
        const item = this.items.get(shape.number(event.output_index, "output_index"));
        if (item?.type === "function_call") item.arguments = shape.string(event.arguments, "arguments");
        return [];
      }
      case "response.completed":
      case "response.incomplete": {
        const response = shape.object(event.response, "response");
        // Read now, so a malformed final event fails here, naming its fields.
        readResponse(shape, response, "response.");
        this.final = { shape, response };
        return [];
      }
      default:
        return [];
    }
  }

  /**
   * The assembled turn, once the stream has ended.
   * @throws `ProviderError` when the stream ended before `response.completed`.
   */
  finish(): ModelResponse {
    if (this.final === undefined) throw streamEndedEarly("openai", "response.completed", this.events);
    const content: ContentBlock[] = [];
    for (const index of [...this.items.keys()].sort((a, b) => a - b)) {
      const item = this.items.get(index)!;
      if (item.type === "text") {
        if (item.text !== "") content.push({ type: "text", text: item.text });
      } else {
        content.push({ type: "tool_use", id: item.callId, name: item.name, ...parseToolArguments(item.arguments) });
      }
    }
    // Status, refusal, usage and model come from the final response; the content from the deltas.
    const final = readResponse(this.final.shape, this.final.response, "response.");
    return { ...final, content, stopReason: final.stopReason === "end_turn" && content.some((block) => block.type === "tool_use") ? "tool_use" : final.stopReason };
  }
}
