import Anthropic from "@anthropic-ai/sdk";
import type {
  ModelCallOptions,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
} from "@rein/core";
import { rejectConflictingOptions } from "../shared/reject-conflicting-options";
import { fromAnthropicError } from "./anthropic-errors";
import { toAnthropicParams } from "./anthropic-request";
import { AnthropicStreamAssembler, fromAnthropicMessage } from "./anthropic-response";

/** Settings of {@link AnthropicProvider}. */
export interface AnthropicProviderSettings {
  /**
   * API key, sent as a bearer token.
   * @default process.env.ANTHROPIC_API_KEY (read by the SDK)
   */
  apiKey?: string;
  /**
   * Base URL of the Messages API, for proxies and gateways.
   * @default process.env.ANTHROPIC_BASE_URL, else "https://api.anthropic.com"
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
  /**
   * `max_tokens` when the request sets no `maxOutputTokens` (the Messages API requires one).
   * @default 4096
   */
  maxOutputTokens?: number;
  /**
   * Mark the end of the constant prefix (tools + system) cacheable with
   * `cache_control: { type: "ephemeral" }`.
   * @default true
   */
  promptCaching?: boolean;
  /** A ready-made SDK client; excludes `apiKey`, `baseURL`, `maxRetries` and `timeout`. */
  client?: Anthropic;
}

/**
 * A {@link ModelProvider} on Anthropic's Messages API, through the official
 * `@anthropic-ai/sdk`. The SDK client is created on first use.
 *
 * @example
 * ```ts
 * const provider = new AnthropicProvider("claude-sonnet-5-5", { maxRetries: 4 });
 * const response = await provider.complete({ system: "Be brief.", messages, tools: [] });
 * ```
 */
export class AnthropicProvider implements ModelProvider {
  readonly specificationVersion = "rein-model-v1" as const;
  readonly providerId = "anthropic";
  readonly modelId: string;
  private readonly settings: AnthropicProviderSettings;
  private sdkClient: Anthropic | undefined;

  constructor(modelId: string, settings: AnthropicProviderSettings = {}) {
    rejectConflictingOptions("AnthropicProvider", settings, ["apiKey", "baseURL", "maxRetries", "timeout"]);
    this.modelId = modelId;
    this.settings = { ...settings };
    this.sdkClient = settings.client;
  }

  /** The SDK client, created on first use. */
  get client(): Anthropic {
    this.sdkClient ??= new Anthropic({
      apiKey: this.settings.apiKey,
      baseURL: this.settings.baseURL,
      maxRetries: this.settings.maxRetries,
      timeout: this.settings.timeout,
    });
    return this.sdkClient;
  }

  /**
   * Sends one request and resolves with the whole assistant turn.
   * @throws a `ProviderError` subclass (`RateLimitError`, `AuthenticationError`,
   * `OverloadedError`, `ContextOverflowError`) once the SDK's retries are used up,
   * or the signal's reason when the caller aborted.
   */
  async complete(request: ModelRequest, options: ModelCallOptions = {}): Promise<ModelResponse> {
    try {
      const message = await this.client.messages.create(this.toParams(request), { signal: options.signal });
      return fromAnthropicMessage(message);
    } catch (error) {
      options.signal?.throwIfAborted();
      throw fromAnthropicError(error);
    }
  }

  /**
   * Streams one request: text and tool-argument deltas as they arrive, then
   * the assembled `response`. Fails like {@link complete}, also for errors the
   * API reports inside the stream.
   */
  async *stream(request: ModelRequest, options: ModelCallOptions = {}): AsyncIterable<ModelStreamEvent> {
    const assembler = new AnthropicStreamAssembler();
    try {
      const events = await this.client.messages.create(
        { ...this.toParams(request), stream: true },
        { signal: options.signal },
      );
      for await (const event of events) yield* assembler.push(event);
    } catch (error) {
      options.signal?.throwIfAborted();
      throw fromAnthropicError(error);
    }
    // The SDK ends an aborted stream quietly; the caller must not mistake it for a whole turn.
    options.signal?.throwIfAborted();
    yield { type: "response", response: assembler.finish() };
  }

  private toParams(request: ModelRequest) {
    return toAnthropicParams(request, {
      modelId: this.modelId,
      maxOutputTokens: this.settings.maxOutputTokens ?? 4096,
      promptCaching: this.settings.promptCaching ?? true,
    });
  }
}
