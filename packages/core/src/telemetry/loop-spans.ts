import type { Attributes, Span, Tracer } from "@opentelemetry/api";
import type { ToolResultBlock, ToolUseBlock } from "../model/content";
import type { ModelRequest, ModelResponse, Usage } from "../model/model-provider";
import type { CallScope } from "../scope/call-scope";
import type { Tool } from "../tools/tool";
import { contentAttribute, otel, parentContext } from "./tracing";

/**
 * The spans one model-tool loop makes: `chat <model>` per model request and
 * `execute_tool <name>` per tool call (GenAI semantic conventions). Only
 * built while an SDK is registered; attributes only while a span records.
 * @internal
 */
export interface LoopTracing {
  readonly tracer: Tracer;
  /** `telemetry.captureContent` of the loop's runtime: messages, arguments and results go on spans. */
  readonly captureContent: boolean;
  /**
   * With `captureContent`: how many of the loop's messages the chat spans
   * carry so far, and the last of them (by identity, to notice a history
   * that was compacted or replaced since).
   */
  captured?: { readonly count: number; readonly last: unknown };
}

/** Starts the `chat <model>` span of one model request. */
export function startChatSpan(tracing: LoopTracing, scope: CallScope, providerName: string, request: ModelRequest): Span {
  const span = tracing.tracer.startSpan(`chat ${request.model ?? ""}`.trimEnd(), { kind: otel().SpanKind.CLIENT }, parentContext(scope));
  if (span.isRecording()) {
    const values: Attributes = {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": providerName,
    };
    if (request.model !== undefined && request.model !== "") values["gen_ai.request.model"] = request.model;
    const sessionId = scope.cursor?.writer.sessionId;
    if (sessionId !== undefined) {
      values["gen_ai.conversation.id"] = sessionId;
      values["rein.session.id"] = sessionId;
    }
    if (scope.fn !== undefined) values["rein.function.name"] = scope.fn.name;
    if (tracing.captureContent) {
      if (request.system !== "") values["gen_ai.system_instructions"] = contentAttribute([{ type: "text", content: request.system }]);
      // Each chat span carries the messages new since the loop's previous chat span (the first carries the whole history):
      // a loop of n requests captures its conversation once, not n times (linear in it, not quadratic).
      const messages = request.messages;
      const seen = tracing.captured;
      const from = seen !== undefined && seen.count > 0 && seen.count <= messages.length && messages[seen.count - 1] === seen.last ? seen.count : 0;
      values["gen_ai.input.messages"] = contentAttribute(from === 0 ? messages : messages.slice(from));
      if (from > 0) values["rein.input.messages.skipped"] = from;
      tracing.captured = { count: messages.length, last: messages[messages.length - 1] };
      if (request.tools.length > 0) values["gen_ai.tool.definitions"] = contentAttribute(request.tools);
    }
    span.setAttributes(values);
  }
  return span;
}

/** Puts the answer on a chat span: response model, usage, finish reason, the llm node it was recorded as. */
export function answerChatSpan(tracing: LoopTracing, span: Span, response: ModelResponse, llmNodeId: string | undefined): void {
  if (!span.isRecording()) return;
  const values: Attributes = {
    ...usageAttributes(response.usage),
    "gen_ai.response.finish_reasons": [response.stopReason],
  };
  if (response.model !== undefined) values["gen_ai.response.model"] = response.model;
  if (llmNodeId !== undefined) values["rein.node.id"] = llmNodeId;
  if (tracing.captureContent) values["gen_ai.output.messages"] = contentAttribute([{ role: "assistant", content: response.content }]);
  span.setAttributes(values);
}

/** Token usage as GenAI attributes. */
export function usageAttributes(usage: Usage): Attributes {
  const values: Attributes = {
    "gen_ai.usage.input_tokens": usage.inputTokens,
    "gen_ai.usage.output_tokens": usage.outputTokens,
  };
  if (usage.cachedInputTokens !== undefined) values["gen_ai.usage.cache_read.input_tokens"] = usage.cachedInputTokens;
  if (usage.cacheCreationInputTokens !== undefined) values["gen_ai.usage.cache_creation.input_tokens"] = usage.cacheCreationInputTokens;
  return values;
}

/** Starts the `execute_tool <name>` span of one tool call. */
export function startToolSpan(tracing: LoopTracing, scope: CallScope, call: ToolUseBlock, tool: Tool | undefined): Span {
  const span = tracing.tracer.startSpan(`execute_tool ${call.name}`, { kind: otel().SpanKind.INTERNAL }, parentContext(scope));
  if (span.isRecording()) {
    const values: Attributes = {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": call.name,
      "gen_ai.tool.call.id": call.id,
      "gen_ai.tool.type": "function",
    };
    if (tool !== undefined) values["gen_ai.tool.description"] = tool.spec.description;
    if (tracing.captureContent) values["gen_ai.tool.call.arguments"] = contentAttribute(call.input);
    span.setAttributes(values);
  }
  return span;
}

/**
 * Puts a tool call's outcome on its span: the result (with captureContent),
 * status ERROR for an error result. The error result's text quotes the
 * call's arguments or the tool's data, so it is the status message only
 * with captureContent; without, the message names the error type and tool.
 */
export function resultToolSpan(tracing: LoopTracing, span: Span, block: ToolResultBlock, error: unknown): void {
  if (!span.isRecording()) return;
  if (tracing.captureContent) span.setAttribute("gen_ai.tool.call.result", contentAttribute(block.content));
  if (block.isError !== true) return;
  const type = error instanceof Error ? error.name || "Error" : "tool_error";
  const content = typeof block.content === "string" ? block.content : contentAttribute(block.content);
  span.setStatus({ code: otel().SpanStatusCode.ERROR, message: tracing.captureContent ? content : `${type} in tool call` });
  span.setAttribute("error.type", type);
}
