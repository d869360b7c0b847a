import OpenAI from "openai";
import type {
  ModelCallOptions,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
} from "@rein/core";
import { rejectConflictingOptions } from "../shared/reject-conflicting-options";
import { toChatParams } from "./chat-completions-request";
import { ChatStreamAssembler, fromChatCompletion } from "./chat-completions-response";
import { fromOpenAIError, fromStreamedOpenAIError } from "./openai-errors";
import { toResponseParams } from "./responses-request";
import { ResponsesStreamAssembler, fromResponse } from "./responses-response";

/** Which OpenAI API an {@link OpenAIProvider} speaks. */
export type OpenAIApi = "chat" | "responses";

/** Settings of {@link OpenAIProvider}. */
export interface OpenAIProviderSettings {
  /**
   * `"chat"` for Chat Completions (`/chat/completions`, which every
   * OpenAI-compatible server speaks), `"responses"` for the Responses API (`/responses`).
   * @default "chat"
   */
  api?: OpenAIApi;
  /**
   * API key, sent as a bearer token. When a base URL is set and no key is
   * found, a placeholder is sent: local servers (llama.cpp, Ollama, vLLM
   * without `--api-key`) need none.
   * @default process.env.OPENAI_API_KEY
   */
  apiKey?: string;
  /**
   * Base URL of the API, including the version path, for OpenAI-compatible
   * servers: `http://localhost:8000/v1` (vLLM), `http://localhost:8080/v1`
   * (llama.cpp server), `http://localhost:11434/v1` (Ollama).
   * @default process.env.OPENAI_BASE_URL, else "https://api.openai.com/v1"
   */
  baseURL?: string;
  /**
   * How many times the SDK retries a failed request (429, 408, 409, 5xx,
   * connection errors), honouring `retry-after`.
   * @default 2
   */
  maxRetries?: number;
  /**
   * Request timeout in milliseconds.
   * @default 600000 (the SDK's ten minutes)
   */
  timeout?: number;
  /** A ready-made SDK client; excludes `apiKey`, `baseURL`, `maxRetries` and `timeout`. */
  client?: OpenAI;
}

/** @internal Sent as the key to servers that need none, because the SDK refuses to start without one. */
export const placeholderApiKey = "no-api-key";

/**
 * A {@link ModelProvider} on OpenAI's Chat Completions or Responses API,
 * through the official `openai` SDK; with `baseURL`, on any OpenAI-compatible
 * server. The SDK client is created on first use.
 *
 * @example
 * ```ts
 * const openai = new OpenAIProvider("gpt-4.1", { api: "responses" });
 * const local = new OpenAIProvider("qwen3:8b", { baseURL: "http://localhost:11434/v1" });
 * ```
 */
export class OpenAIProvider implements ModelProvider {
  readonly specificationVersion = "rein-model-v1" as const;
  readonly providerId = "openai";
  readonly modelId: string;
  /** The API this provider speaks. */
  readonly api: OpenAIApi;
  private readonly settings: OpenAIProviderSettings;
  private sdkClient: OpenAI | undefined;

  constructor(modelId: string, settings: OpenAIProviderSettings = {}) {
    rejectConflictingOptions("OpenAIProvider", settings, ["apiKey", "baseURL", "maxRetries", "timeout"]);
    if (settings.api !== undefined && settings.api !== "chat" && settings.api !== "responses") {
      throw new TypeError(`OpenAIProvider: api must be "chat" or "responses", got ${JSON.stringify(settings.api)}`);
    }
    this.modelId = modelId;
    this.api = settings.api ?? "chat";
    this.settings = { ...settings };
    this.sdkClient = settings.client;
  }

  /** The SDK client, created on first use. */
  get client(): OpenAI {
    if (this.sdkClient === undefined) {
      const baseURL = this.settings.baseURL ?? readEnv("OPENAI_BASE_URL");
      const apiKey = this.settings.apiKey ?? readEnv("OPENAI_API_KEY") ?? (baseURL ? placeholderApiKey : undefined);
      this.sdkClient = new OpenAI({
        apiKey,
        baseURL,
        maxRetries: this.settings.maxRetries,
        timeout: this.settings.timeout,
      });
    }
    return this.sdkClient;
  }

  /**
   * Sends one request and resolves with the whole assistant turn.
   * @throws a `ProviderError` subclass (`RateLimitError`, `AuthenticationError`,
   * `OverloadedError`, `ContextOverflowError`) once the SDK's retries are used up,
   * or the signal's reason when the caller aborted.
   */
  async complete(request: ModelRequest, options: ModelCallOptions = {}): Promise<ModelResponse> {
    const requestOptions = { signal: options.signal };
    try {
      if (this.api === "responses") {
        return fromResponse(await this.client.responses.create(toResponseParams(request, this.modelId), requestOptions));
      }
      return fromChatCompletion(await this.client.chat.completions.create(toChatParams(request, this.modelId), requestOptions));
    } catch (error) {
      options.signal?.throwIfAborted();
      throw fromOpenAIError(error);
    }
  }

  /**
   * Streams one request: text and tool-argument deltas as they arrive, then
   * the assembled `response`. Fails like {@link complete}, also for errors the
   * API reports inside the stream.
   */
  async *stream(request: ModelRequest, options: ModelCallOptions = {}): AsyncIterable<ModelStreamEvent> {
    let response: ModelResponse;
    try {
      response = yield* this.api === "responses" ? this.streamResponses(request, options) : this.streamChat(request, options);
    } catch (error) {
      options.signal?.throwIfAborted();
      throw fromOpenAIError(error);
    }
    // The SDK ends an aborted stream quietly; the caller must not mistake it for a whole turn.
    options.signal?.throwIfAborted();
    yield { type: "response", response };
  }

  private async *streamChat(request: ModelRequest, options: ModelCallOptions) {
    const assembler = new ChatStreamAssembler();
    const chunks = await this.client.chat.completions.create(
      { ...toChatParams(request, this.modelId), stream: true, stream_options: { include_usage: true } },
      { signal: options.signal },
    );
    for await (const chunk of chunks) yield* assembler.push(chunk);
    return assembler.finish();
  }

  private async *streamResponses(request: ModelRequest, options: ModelCallOptions) {
    const assembler = new ResponsesStreamAssembler();
    const events = await this.client.responses.create(
      { ...toResponseParams(request, this.modelId), stream: true },
      { signal: options.signal },
    );
    for await (const event of events) {
      // Failures after the HTTP 200 arrive as events, not as a failed request.
      if (event.type === "error") throw fromStreamedOpenAIError(event);
      if (event.type === "response.failed") throw fromStreamedOpenAIError(event.response.error);
      yield* assembler.push(event);
    }
    return assembler.finish();
  }
}

function readEnv(name: string): string | undefined {
  const value = process.env[name]?.trim();
  return value === "" ? undefined : value;
}
