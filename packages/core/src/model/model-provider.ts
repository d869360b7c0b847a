import type { ContentBlock, Message } from "./content";

/** A JSON Schema object (draft 2020-12 subset the providers accept). */
export type JsonSchema = { readonly [key: string]: unknown };

/** What the model is told about one tool. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments object. */
  readonly parameters: JsonSchema;
}

/** Whether and how the model must call tools. @default "auto" */
export type ToolChoice = "auto" | "none" | "required" | { readonly type: "tool"; readonly name: string };

/**
 * One request to a model, in Rein's normalized form. `system` and `tools`
 * together form the constant prefix: the runtime keeps them byte-identical
 * across every request of a run so provider prompt caches hit.
 */
export interface ModelRequest {
  /** Model id; providers fall back to the id they were constructed with. */
  readonly model?: string;
  /** Instructions. Never contains per-request or per-function text. */
  readonly system: string;
  readonly messages: readonly Message[];
  readonly tools: readonly ToolSpec[];
  readonly toolChoice?: ToolChoice;
  readonly maxOutputTokens?: number;
  readonly temperature?: number;
  /** Reasoning effort, for models that take one. */
  readonly effort?: "low" | "medium" | "high";
  /**
   * The final answer must be one JSON value matching `schema` (structured
   * output). Adapters use the provider's native form: OpenAI chat
   * `response_format: { type: "json_schema", strict }`, Responses
   * `text.format`, Anthropic a forced final tool named `name`; the runtime
   * validates what comes back either way.
   */
  readonly responseFormat?: ResponseFormat;
  /**
   * A stable key for the conversation (the session id), for providers that
   * route requests sharing a prompt prefix to the same cache (OpenAI
   * `prompt_cache_key`).
   */
  readonly cacheKey?: string;
}

/**
 * A structured final answer: a JSON Schema (object at the top) and a name
 * for it.
 * @example
 * ```ts
 * const format: ResponseFormat = { name: "weather", schema: { type: "object", properties: { tempC: { type: "number" } }, required: ["tempC"] } };
 * ```
 */
export interface ResponseFormat {
  /** Letters, digits, `_` and `-` (what every provider accepts as a schema or tool name). */
  readonly name: string;
  readonly schema: JsonSchema;
  /** Ask for strict schema adherence where the provider has it (OpenAI). @default true */
  readonly strict?: boolean;
}

/** Token counts of one model request. */
export interface Usage {
  /** Every input token of the request, including those read from or written to the prompt cache. */
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Input tokens served from the provider's prompt cache. */
  readonly cachedInputTokens?: number;
  /** Input tokens written to the provider's prompt cache. */
  readonly cacheCreationInputTokens?: number;
}

/** Why the model stopped. */
export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "refusal" | "other";

/** One complete assistant turn. */
export interface ModelResponse {
  /** Text and tool_use blocks, in the order the model produced them. */
  readonly content: readonly ContentBlock[];
  readonly stopReason: StopReason;
  readonly usage: Usage;
  /** The model that answered, as the provider reported it. */
  readonly model?: string;
}

/** Incremental events of a streamed response; the last one is always `response`. */
export type ModelStreamEvent =
  | { readonly type: "text-delta"; readonly text: string }
  | { readonly type: "tool-call-start"; readonly id: string; readonly name: string }
  | { readonly type: "tool-call-delta"; readonly id: string; readonly argumentsDelta: string }
  | { readonly type: "response"; readonly response: ModelResponse };

/**
 * A request a provider is about to send again after a failed attempt, and
 * how long it waits first: what {@link ModelCallOptions.onRetry} receives.
 * The runtime reports it as a `model-retry` run event and a log line, so a
 * wait for a rate limit never looks like a hang.
 */
export interface ModelRetry {
  /** The provider (`"anthropic"`, `"openai"`). */
  readonly provider: string;
  /** 1 for the first retry of the request. */
  readonly attempt: number;
  /** The wait before the next attempt, in milliseconds. */
  readonly waitMs: number;
  /** True when the wait is the server's (`retry-after` / `retry-after-ms`), false for the provider's own backoff. */
  readonly fromRetryAfter: boolean;
  /** The HTTP status of the failed attempt; absent for a connection failure. */
  readonly status?: number;
  /** What failed, in words: `"429 rate limited"`, `"connection failed"`. */
  readonly reason: string;
}

/** Per-call options of a {@link ModelProvider}. */
export interface ModelCallOptions {
  readonly signal?: AbortSignal;
  /**
   * Called before each retry's wait (see {@link ModelRetry}). A listener
   * that throws is ignored.
   */
  readonly onRetry?: (retry: ModelRetry) => void;
}

/**
 * The model interface Rein's runtime talks to. It knows no SDK: adapters in
 * `@rein/providers` map it to each API's wire format, and
 * {@link ScriptedProvider} implements it for tests and demos.
 *
 * @example
 * ```ts
 * const response = await provider.complete({ system: "Be brief.", messages, tools: [] });
 * ```
 */
export interface ModelProvider {
  /** The version of this interface the provider implements. */
  readonly specificationVersion: "rein-model-v1";
  /** Short provider name for logs and session nodes (`"anthropic"`, `"openai"`, `"scripted"`). */
  readonly providerId: string;
  /** The model used when a request names none. */
  readonly modelId: string;
  /** Sends one request and resolves with the whole assistant turn. */
  complete(request: ModelRequest, options?: ModelCallOptions): Promise<ModelResponse>;
  /** Sends one request and yields deltas, ending with the assembled `response` event. */
  stream(request: ModelRequest, options?: ModelCallOptions): AsyncIterable<ModelStreamEvent>;
}

/** Re-exported for adapters that only need content types next to the interface. */
export type { ContentBlock, Message };
