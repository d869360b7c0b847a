import type { ContentBlock, ModelResponse, ModelStreamEvent, ResponseFormat, StopReason, Usage } from "@rein/core";
import { estimatedTokens } from "../shared/estimated-tokens";
import { parseToolArguments } from "../shared/parse-tool-arguments";
import { streamEndedEarly, WireShape } from "../shared/wire-shape";

/**
 * Maps a whole Messages API response to Rein's normalized turn, checking
 * its shape on the way (a malformed body is a `ProviderError` naming the
 * field). With a `responseFormat`, a call of the format's tool comes back
 * as the answer text (see {@link answerFromFormatTool}).
 */
export function fromAnthropicMessage(body: unknown, format?: ResponseFormat): ModelResponse {
  const shape = new WireShape("anthropic", "response", body);
  const message = shape.root();
  const content: ContentBlock[] = [];
  const answers: string[] = [];
  shape.array(message.content, "content").forEach((value, index) => {
    const path = `content[${index}]`;
    const block = shape.object(value, path);
    const type = shape.string(block.type, `${path}.type`);
    if (type === "text") {
      content.push({ type: "text", text: shape.string(block.text, `${path}.text`) });
    } else if (type === "tool_use") {
      const name = shape.string(block.name, `${path}.name`);
      const id = shape.string(block.id, `${path}.id`);
      const input = shape.object(block.input, `${path}.input`);
      if (format !== undefined && name === format.name) answers.push(JSON.stringify(input));
      else content.push({ type: "tool_use", id, name, input });
    }
  });
  return answerFromFormatTool(
    {
      content,
      stopReason: toStopReason(shape.optionalString(message.stop_reason, "stop_reason")),
      usage: toUsage(readUsage(shape, message.usage, "usage")),
      model: shape.optionalString(message.model, "model"),
    },
    answers,
  );
}

/**
 * The turn as the runtime sees it when the model called the format's tool
 * (`answers` holds the JSON text of each such call, in order): one text
 * block holding the first call's JSON text, after any other tool calls; the
 * turn's other text blocks are dropped, so the text is exactly the JSON
 * value; the stop reason `tool_use` becomes `end_turn` unless another tool
 * call remains. Without such a call the turn is left as it is.
 */
export function answerFromFormatTool(response: ModelResponse, answers: readonly string[]): ModelResponse {
  if (answers.length === 0) return response;
  const toolCalls = response.content.filter((block) => block.type === "tool_use");
  return {
    ...response,
    content: [...toolCalls, { type: "text", text: answers[0] }],
    stopReason: response.stopReason === "tool_use" && toolCalls.length === 0 ? "end_turn" : response.stopReason,
  };
}

/** Anthropic's usage numbers, as they appear in a response or a stream event. */
interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number | undefined;
  cache_creation_input_tokens: number | undefined;
}

function readUsage(shape: WireShape, value: unknown, path: string): AnthropicUsage {
  const usage = shape.object(value, path);
  return {
    input_tokens: shape.count(usage.input_tokens, `${path}.input_tokens`),
    output_tokens: shape.count(usage.output_tokens, `${path}.output_tokens`),
    cache_read_input_tokens: shape.optionalCount(usage.cache_read_input_tokens, `${path}.cache_read_input_tokens`),
    cache_creation_input_tokens: shape.optionalCount(usage.cache_creation_input_tokens, `${path}.cache_creation_input_tokens`),
  };
}

/**
 * Anthropic's `input_tokens` counts only the uncached part of the prompt;
 * Rein's `inputTokens` is the whole prompt, as OpenAI reports it, so the two
 * providers' numbers compare.
 */
function toUsage(usage: AnthropicUsage): Usage {
  const cachedInputTokens = usage.cache_read_input_tokens ?? 0;
  const cacheCreationInputTokens = usage.cache_creation_input_tokens ?? 0;
  return {
    inputTokens: usage.input_tokens + cachedInputTokens + cacheCreationInputTokens,
    outputTokens: usage.output_tokens,
    cachedInputTokens,
    cacheCreationInputTokens,
  };
}

function toStopReason(reason: string | undefined): StopReason {
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
  | { readonly type: "tool_use"; readonly id: string; readonly name: string; json: string }
  // A call of the response format's tool: its input JSON is the answer text.
  | { readonly type: "answer"; json: string };

/**
 * Assembles a streamed Messages API response: text deltas and the
 * `input_json_delta` fragments of each tool call, by content-block index.
 * The input of the response format's tool streams as `text-delta`s, since
 * it is the answer text. Only a stream that reached `message_stop` makes a
 * turn; each event's shape is checked.
 */
export class AnthropicStreamAssembler {
  private readonly blocks = new Map<number, BlockInProgress>();
  private model: string | undefined;
  private stopReason: string | undefined;
  private usage: AnthropicUsage = {
    input_tokens: 0,
    output_tokens: 0,
    cache_read_input_tokens: undefined,
    cache_creation_input_tokens: undefined,
  };
  private events = 0;
  private stopped = false;
  private started = false;

  constructor(private readonly format?: ResponseFormat) {}

  /**
   * The counts the stream reported so far (`message_start`'s, updated by
   * any `message_delta`), or undefined before `message_start`: what the
   * provider bills for a stream that fails before its end. `message_start`
   * counts 1 output token; when more was streamed than the counts say, the
   * output is raised to an estimate of what streamed (4 characters a token),
   * since the provider bills what it wrote.
   */
  reportedUsage(): Usage | undefined {
    if (!this.started) return undefined;
    let streamed = 0;
    for (const block of this.blocks.values()) streamed += block.type === "text" ? block.text.length : block.json.length;
    const usage = toUsage(this.usage);
    return { ...usage, outputTokens: Math.max(usage.outputTokens, estimatedTokens(streamed)) };
  }

  /** Takes one server-sent event and returns the Rein events it produces. */
  push(value: unknown): ModelStreamEvent[] {
    this.events++;
    const shape = new WireShape("anthropic", "stream event", value);
    const event = shape.root();
    switch (shape.string(event.type, "type")) {
      case "message_start": {
        const message = shape.object(event.message, "message");
        this.model = shape.optionalString(message.model, "message.model");
        this.usage = readUsage(shape, message.usage, "message.usage");
        this.started = true;
        return [];
      }
      case "content_block_start":
        return this.startBlock(shape, shape.number(event.index, "index"), shape.object(event.content_block, "content_block"));
      case "content_block_delta": {
        const index = shape.number(event.index, "index");
        const delta = shape.object(event.delta, "delta");
        const block = this.blocks.get(index);
        const deltaType = shape.string(delta.type, "delta.type");
        if (deltaType === "text_delta" && block?.type === "text") {
          const text = shape.string(delta.text, "delta.text");
          block.text += text;
          return [{ type: "text-delta", text }];
        }
        if (deltaType === "input_json_delta" && (block?.type === "tool_use" || block?.type === "answer")) {
          const fragment = shape.string(delta.partial_json, "delta.partial_json");
          block.json += fragment;
          if (block.type === "answer") return fragment === "" ? [] : [{ type: "text-delta", text: fragment }];
          return [{ type: "tool-call-delta", id: block.id, argumentsDelta: fragment }];
        }
        if ((deltaType === "text_delta" || deltaType === "input_json_delta") && block === undefined) {
          throw shape.malformed("index", index, "the index of a block a content_block_start opened");
        }
        return [];
      }
      case "message_delta": {
        const delta = shape.object(event.delta, "delta");
        this.stopReason = shape.optionalString(delta.stop_reason, "delta.stop_reason") ?? this.stopReason;
        // message_delta usage is cumulative; fields it leaves null keep their message_start value, and
        // a message_delta without usage (some gateways drop it) keeps all of them: the turn is not lost.
        const usage = shape.optionalObject(event.usage, "usage");
        if (usage === undefined) return [];
        const number = (field: keyof AnthropicUsage) => shape.optionalCount(usage[field], `usage.${field}`) ?? this.usage[field];
        this.usage = {
          input_tokens: number("input_tokens") ?? 0,
          output_tokens: number("output_tokens") ?? 0,
          cache_read_input_tokens: number("cache_read_input_tokens"),
          cache_creation_input_tokens: number("cache_creation_input_tokens"),
        };
        return [];
      }
      case "message_stop":
        this.stopped = true;
        return [];
      default:
        return [];
    }
  }

  private startBlock(shape: WireShape, index: number, block: Record<string, unknown>): ModelStreamEvent[] {
    const type = shape.string(block.type, "content_block.type");
    if (type === "text") {
      const text = shape.string(block.text, "content_block.text");
      this.blocks.set(index, { type: "text", text });
      return text === "" ? [] : [{ type: "text-delta", text }];
    }
    if (type === "tool_use") {
      const id = shape.string(block.id, "content_block.id");
      const name = shape.string(block.name, "content_block.name");
      if (this.format !== undefined && name === this.format.name) {
        this.blocks.set(index, { type: "answer", json: "" });
        return [];
      }
      this.blocks.set(index, { type: "tool_use", id, name, json: "" });
      return [{ type: "tool-call-start", id, name }];
    }
    return [];
  }

  /**
   * The assembled turn, once the stream has ended.
   * @throws `ProviderError` when the stream ended before `message_stop`.
   */
  finish(): ModelResponse {
    if (!this.stopped) throw streamEndedEarly("anthropic", "message_stop", this.events);
    const content: ContentBlock[] = [];
    const answers: string[] = [];
    for (const index of [...this.blocks.keys()].sort((a, b) => a - b)) {
      const block = this.blocks.get(index)!;
      if (block.type === "text") {
        if (block.text !== "") content.push({ type: "text", text: block.text });
      } else if (block.type === "answer") {
        // Kept as sent, so the text deltas add up to the answer text.
        answers.push(block.json === "" ? "{}" : block.json);
      } else {
        content.push({ type: "tool_use", id: block.id, name: block.name, ...parseToolArguments(block.json) });
      }
    }
    return answerFromFormatTool(
      { content, stopReason: toStopReason(this.stopReason), usage: toUsage(this.usage), model: this.model },
      answers,
    );
  }
}
