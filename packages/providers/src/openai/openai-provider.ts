import type OpenAI from "openai";
import { openaiSdk } from "../shared/lazy-sdk";
import type {
  ModelCallOptions,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
} from "@rein/core";
import { estimatedTokens } from "../shared/estimated-tokens";
import { ProviderCall } from "../shared/provider-call";
import { readEnv, requireCredential } from "../shared/credentials";
import { rejectConflictingOptions } from "../shared/reject-conflicting-options";
import { readResponseBody } from "../shared/wire-shape";
import { resolveRequestLimits, type RequestLimits, type RequestLimitSettings } from "../shared/request-limits";
import { toChatParams } from "./chat-completions-request";
import { ChatStreamAssembler, fromChatCompletion } from "./chat-completions-response";
import { describeOpenAIFailure, fromStreamedOpenAIError } from "./openai-errors";
import { toResponseParams } from "./responses-request";
import { ResponsesStreamAssembler, fromResponse } from "./responses-response";

/** Which OpenAI API an {@link OpenAIProvider} speaks. */
export type OpenAIApi = "chat" | "responses";

/**
 * Settings of {@link OpenAIProvider}. The request limits (`timeoutMs`,
 * `idleTimeoutMs`, `maxRetryAfterMs`, `maxRetries`) apply to every call,
 * also through a given `client`.
 */
export interface OpenAIProviderSettings extends RequestLimitSettings {
  /**
   * `"chat"` for Chat Completions (`/chat/completions`, which every
   * OpenAI-compatible server speaks), `"responses"` for the Responses API (`/responses`).
   * @default "chat"
   */
  api?: OpenAIApi;
  /**
   * API key, sent as a bearer token. When a base URL is set and no key is
   * found, a placeholder is sent: local servers (llama.cpp, Ollama, vLLM
   * without `--api-key`) need none. Never appears in an error: text a
   * server echoes back is redacted.
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
  /** A ready-made SDK client; excludes `apiKey` and `baseURL`. */
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
  /** The version of core's model interface this adapter implements. */
  readonly specificationVersion = "rein-model-v1" as const;
  /** `"openai"`, in logs, session nodes and errors. */
  readonly providerId = "openai";
  /** The model used when a request names none. */
  readonly modelId: string;
  /** The API this provider speaks. */
  readonly api: OpenAIApi;
  private readonly settings: OpenAIProviderSettings;
  private readonly limits: RequestLimits;
  private sdkClient: OpenAI | undefined;

  /**
   * @throws TypeError when `client` comes with `apiKey` or `baseURL`, `api`
   * is unknown, or a request limit is not a valid number.
   * @throws ProviderConfigError (`variable: "OPENAI_API_KEY"`) when, without
   * a `client`, there is no API key (`apiKey`, `OPENAI_API_KEY`) and no base
   * URL of an OpenAI-compatible server (`baseURL`, `OPENAI_BASE_URL`).
   */
  constructor(modelId: string, settings: OpenAIProviderSettings = {}) {
    rejectConflictingOptions("OpenAIProvider", settings, ["apiKey", "baseURL"]);
    if (settings.api !== undefined && settings.api !== "chat" && settings.api !== "responses") {
      throw new TypeError(`OpenAIProvider: api must be "chat" or "responses", got ${JSON.stringify(settings.api)}`);
    }
    this.limits = resolveRequestLimits("OpenAIProvider", settings);
    if (settings.client === undefined) {
      requireCredential(nonEmpty(settings.apiKey) || readEnv("OPENAI_API_KEY") !== undefined || nonEmpty(settings.baseURL) || readEnv("OPENAI_BASE_URL") !== undefined, {
        owner: "OpenAIProvider",
        provider: "openai",
        variable: "OPENAI_API_KEY",
        alternatives: ", or set OPENAI_BASE_URL (or pass { baseURL }) for an OpenAI-compatible server that needs no key",
      });
    }
    this.modelId = modelId;
    this.api = settings.api ?? "chat";
    this.settings = { ...settings };
    this.sdkClient = settings.client;
  }

  /** The SDK client, created on first use. Its own retries and timeout are overridden per request. */
  get client(): OpenAI {
    if (this.sdkClient === undefined) {
      const baseURL = this.settings.baseURL ?? readEnv("OPENAI_BASE_URL");
      const apiKey = this.settings.apiKey ?? readEnv("OPENAI_API_KEY") ?? (baseURL ? placeholderApiKey : undefined);
      this.sdkClient = new (openaiSdk().default)({ apiKey, baseURL, maxRetries: 0 });
    }
    return this.sdkClient;
  }

  /**
   * Sends one request and resolves with the whole assistant turn.
   * @throws a `ProviderError`: a subclass (`RateLimitError`, `AuthenticationError`,
   * `OverloadedError`, `ContextOverflowError`, `ProviderTimeoutError`) when
   * one fits, once the retries are used up; or the signal's reason when the
   * caller aborted.
   */
  async complete(request: ModelRequest, options: ModelCallOptions = {}): Promise<ModelResponse> {
    const call = this.startCall(options);
    try {
      if (this.api === "responses") {
        const params = toResponseParams(request, this.modelId);
        // Raw, because the SDK walks `output` before returning and would fail on a malformed body with a TypeError.
        const body = await call.send(async (requestOptions) =>
          readResponseBody("openai", await this.client.responses.create(params, requestOptions).asResponse()),
        );
        return fromResponse(body);
      }
      const params = toChatParams(request, this.modelId);
      return fromChatCompletion(await call.send((requestOptions) => this.client.chat.completions.create(params, requestOptions)));
    } catch (error) {
      throw call.failure(error);
    } finally {
      call.close();
    }
  }

  /**
   * Streams one request: text and tool-argument deltas as they arrive, then
   * the assembled `response`, only once the stream reached its end (a chat
   * `finish_reason`, Responses `response.completed`). Fails like
   * {@link complete}, also for errors the API reports inside the stream, a
   * stream that ends early, and one that goes silent; the error's
   * `reportedUsage` holds any usage the stream reported before it failed.
   */
  async *stream(request: ModelRequest, options: ModelCallOptions = {}): AsyncIterable<ModelStreamEvent> {
    const call = this.startCall(options);
    let assembler: ResponsesStreamAssembler | ChatStreamAssembler | undefined;
    let response: ModelResponse;
    try {
      // Each checks for an abort when its stream ends (the SDK ends an aborted stream quietly): not a whole turn.
      // A stream that reports no usage is reckoned at the size of what was sent, not at nothing (measured only then).
      if (this.api === "responses") {
        const params = toResponseParams(request, this.modelId);
        assembler = new ResponsesStreamAssembler(() => estimatedTokens(JSON.stringify(params).length));
        response = yield* this.streamResponses(params, call, assembler);
      } else {
        const chat = toChatParams(request, this.modelId);
        assembler = new ChatStreamAssembler(() => estimatedTokens(JSON.stringify(chat).length));
        response = yield* this.streamChat(chat, call, assembler);
      }
    } catch (error) {
      // Usage the stream reported before it failed is billed: it stays on the error.
      throw call.failure(error, assembler?.reportedUsage());
    } finally {
      call.close();
    }
    yield { type: "response", response };
  }

  private async *streamChat(chat: ReturnType<typeof toChatParams>, call: ProviderCall, assembler: ChatStreamAssembler) {
    const params = { ...chat, stream: true as const, stream_options: { include_usage: true } };
    const chunks = await call.send((requestOptions) => this.client.chat.completions.create(params, requestOptions));
    // Broken, or silent past a limit, after the finish_reason (the usage chunk or [DONE] lost): the answer is whole,
    // and a turn failed there would be paid twice when asked again. Its usage is what was reported, else the
    // estimate. The caller's own abort still ends it.
    const whole = () => assembler.finished() && !call.abortedByCaller();
    try {
      for await (const chunk of call.read(chunks, "a finish_reason")) yield* assembler.push(chunk);
    } catch (error) {
      if (!whole()) throw error;
    }
    if (!whole()) call.throwIfAborted();
    return assembler.finish();
  }

  private async *streamResponses(responseParams: ReturnType<typeof toResponseParams>, call: ProviderCall, assembler: ResponsesStreamAssembler) {
    const params = { ...responseParams, stream: true as const };
    const events = await call.send((requestOptions) => this.client.responses.create(params, requestOptions));
    for await (const event of call.read(events, "response.completed")) {
      // Failures after the HTTP 200 arrive as events, not as a failed request.
      if (event.type === "error") throw fromStreamedOpenAIError(event);
      if (event.type === "response.failed") {
        assembler.pushFailed(event);
        throw fromStreamedOpenAIError((event.response as { error?: { code?: string | null; message?: string } | null } | undefined)?.error ?? null);
      }
      yield* assembler.push(event);
    }
    call.throwIfAborted();
    return assembler.finish();
  }

  private startCall({ signal, onRetry }: ModelCallOptions): ProviderCall {
    const apiKey = this.client.apiKey;
    return new ProviderCall(
      {
        provider: "openai",
        settingsOwner: "OpenAIProvider",
        limits: this.limits,
        secrets: typeof apiKey === "string" && apiKey !== placeholderApiKey ? [apiKey] : [],
        describeFailure: describeOpenAIFailure,
      },
      signal,
      onRetry,
    );
  }
}

function nonEmpty(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== "";
}
