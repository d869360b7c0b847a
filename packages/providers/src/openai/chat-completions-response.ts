import type { ContentBlock, ModelResponse, ModelStreamEvent, StopReason, Usage } from "@rein/core";
import { estimatedUsage } from "../shared/estimated-tokens";
import { parseToolArguments } from "../shared/parse-tool-arguments";
import { streamEndedEarly, WireShape } from "../shared/wire-shape";

/**
 * Maps a whole Chat Completions response to Rein's normalized turn, checking
 * its shape on the way: `choices` (non-empty, with a `message`) and `usage`
 * must be there; a malformed body is a `ProviderError` naming the field.
 */
export function fromChatCompletion(body: unknown): ModelResponse {
  const shape = new WireShape("openai", "response", body);
  const completion = shape.root();
  const choice = shape.object(shape.array(completion.choices, "choices", { nonEmpty: true })[0], "choices[0]");
  const message = shape.object(choice.message, "choices[0].message");
  const refusal = shape.optionalString(message.refusal, "choices[0].message.refusal");
  const content: ContentBlock[] = [];
  const text = shape.optionalString(message.content, "choices[0].message.content") ?? refusal ?? "";
  if (text !== "") content.push({ type: "text", text });
  const calls = message.tool_calls == null ? [] : shape.array(message.tool_calls, "choices[0].message.tool_calls");
  calls.forEach((value, index) => {
    const path = `choices[0].message.tool_calls[${index}]`;
    const call = shape.object(value, path);
    if (call.type !== undefined && call.type !== "function") return;
    const fn = shape.object(call.function, `${path}.function`);
    content.push({
      type: "tool_use",
      id: shape.string(call.id, `${path}.id`),
      name: shape.string(fn.name, `${path}.function.name`),
      ...parseToolArguments(shape.optionalString(fn.arguments, `${path}.function.arguments`) ?? ""),
    });
  });
  return {
    content,
    stopReason: refusal ? "refusal" : toStopReason(shape.optionalString(choice.finish_reason, "choices[0].finish_reason")),
    usage: readUsage(shape, completion.usage, "usage"),
    model: shape.optionalString(completion.model, "model"),
  };
}

function readUsage(shape: WireShape, value: unknown, path: string): Usage {
  const usage = shape.object(value, path);
  const details = shape.optionalObject(usage.prompt_tokens_details, `${path}.prompt_tokens_details`);
  return {
    inputTokens: shape.count(usage.prompt_tokens, `${path}.prompt_tokens`),
    outputTokens: shape.count(usage.completion_tokens, `${path}.completion_tokens`),
    cachedInputTokens: shape.optionalCount(details?.cached_tokens, `${path}.prompt_tokens_details.cached_tokens`) ?? 0,
    cacheCreationInputTokens:
      shape.optionalCount(details?.cache_write_tokens, `${path}.prompt_tokens_details.cache_write_tokens`) ?? 0,
  };
}

function toStopReason(reason: string | undefined): StopReason {
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
 * in one chunk instead). Only a stream whose choice sent a `finish_reason`
 * makes a turn (the SDK reads `[DONE]` itself and does not pass it on); the
 * usage chunk that follows it is optional, since some OpenAI-compatible
 * servers ignore `stream_options.include_usage`. A turn whose stream
 * reported no usage at all carries an estimate (4 characters a token: the
 * request sent, and the text and tool calls that came back), so the reach
 * budget and the spend caps are charged something like what the server
 * billed, never nothing.
 */
export class ChatStreamAssembler {
  private text = "";
  private refusal = "";
  private readonly toolCalls = new Map<number, ToolCallInProgress>();
  private finishReason: string | undefined;
  private usage: Usage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheCreationInputTokens: 0 };
  private usageReported = false;
  private model: string | undefined;
  private chunks = 0;

  /** @param inputEstimate the input tokens the request is reckoned at, asked only for a stream that reports no usage. */
  constructor(private readonly inputEstimate: () => number = () => 0) {}

  /**
   * What the provider bills for a stream that fails before its end: the
   * counts the stream reported so far (OpenAI reports usage only in the
   * last chunk; some servers in every chunk), else, once a chunk arrived
   * (the request was taken and the answer began), the estimate of what was
   * sent and what streamed; undefined before any chunk.
   */
  reportedUsage(): Usage | undefined {
    if (this.usageReported) return this.usage;
    return this.chunks > 0 ? this.estimatedUsage() : undefined;
  }

  /** Takes one chunk and returns the Rein events it produces. */
  push(value: unknown): ModelStreamEvent[] {
    this.chunks++;
    const shape = new WireShape("openai", "stream event", value);
    const chunk = shape.root();
    const events: ModelStreamEvent[] = [];
    this.model ??= shape.optionalString(chunk.model, "model");
    // With stream_options.include_usage the last chunk has usage and no choices.
    if (chunk.usage != null) {
      this.usage = readUsage(shape, chunk.usage, "usage");
      this.usageReported = true;
    }
    const choices = chunk.choices == null ? [] : shape.array(chunk.choices, "choices");
    if (choices.length === 0) return events;
    const choice = shape.object(choices[0], "choices[0]");
    this.finishReason = shape.optionalString(choice.finish_reason, "choices[0].finish_reason") ?? this.finishReason;
    const delta = shape.optionalObject(choice.delta, "choices[0].delta") ?? {};
    const text = shape.optionalString(delta.content, "choices[0].delta.content");
    if (text) {
      this.text += text;
      events.push({ type: "text-delta", text });
    }
    this.refusal += shape.optionalString(delta.refusal, "choices[0].delta.refusal") ?? "";
    const fragments = delta.tool_calls == null ? [] : shape.array(delta.tool_calls, "choices[0].delta.tool_calls");
    fragments.forEach((value, position) => {
      const path = `choices[0].delta.tool_calls[${position}]`;
      const fragment = shape.object(value, path);
      const index = shape.number(fragment.index, `${path}.index`);
      const fn = shape.optionalObject(fragment.function, `${path}.function`);
      let call = this.toolCalls.get(index);
      if (call === undefined) {
        call = {
          id: shape.optionalString(fragment.id, `${path}.id`) ?? `call_${index}`,
          name: shape.optionalString(fn?.name, `${path}.function.name`) ?? "",
          arguments: "",
        };
        this.toolCalls.set(index, call);
        events.push({ type: "tool-call-start", id: call.id, name: call.name });
      }
      const argumentsDelta = shape.optionalString(fn?.arguments, `${path}.function.arguments`);
      if (argumentsDelta) {
        call.arguments += argumentsDelta;
        events.push({ type: "tool-call-delta", id: call.id, argumentsDelta });
      }
    });
    return events;
  }

  /** Whether the choice sent its `finish_reason`: the turn's content is whole, whatever follows. */
  finished(): boolean {
    return this.finishReason !== undefined;
  }

  /**
   * The assembled turn, once the stream has ended.
   * @throws `ProviderError` when no `finish_reason` arrived: the stream ended early.
   */
  finish(): ModelResponse {
    if (this.finishReason === undefined) throw streamEndedEarly("openai", "a finish_reason", this.chunks);
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
      usage: this.usageReported ? this.usage : this.estimatedUsage(),
      model: this.model,
    };
  }

  /** What a stream that reported no usage is reckoned at: 4 characters a token. */
  private estimatedUsage(): Usage {
    let written = this.text.length + this.refusal.length;
    for (const call of this.toolCalls.values()) written += call.name.length + call.arguments.length;
    return estimatedUsage(this.inputEstimate(), written);
  }
}
