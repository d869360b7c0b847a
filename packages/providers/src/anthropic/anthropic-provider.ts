import type Anthropic from "@anthropic-ai/sdk";
import { anthropicClientClass } from "../shared/lazy-sdk";
import type {
  ModelCallOptions,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
} from "@rein/core";
import { ProviderCall } from "../shared/provider-call";
import { readEnv, requireCredential } from "../shared/credentials";
import { rejectConflictingOptions } from "../shared/reject-conflicting-options";
import { resolveRequestLimits, type RequestLimits, type RequestLimitSettings } from "../shared/request-limits";
import { describeAnthropicFailure } from "./anthropic-errors";
import { toAnthropicParams } from "./anthropic-request";
import { AnthropicStreamAssembler, fromAnthropicMessage } from "./anthropic-response";

/**
 * Settings of {@link AnthropicProvider}. The request limits (`timeoutMs`,
 * `idleTimeoutMs`, `maxRetryAfterMs`, `maxRetries`) apply to every call,
 * also through a given `client`.
 */
export interface AnthropicProviderSettings extends RequestLimitSettings {
  /**
   * API key, sent as a bearer token. Never appears in an error: text a
   * server echoes back is redacted.
   * @default process.env.ANTHROPIC_API_KEY (read by the SDK)
   */
  apiKey?: string;
  /**
   * Base URL of the Messages API, for proxies and gateways.
   * @default process.env.ANTHROPIC_BASE_URL, else "https://api.anthropic.com"
   */
  baseURL?: string;
  /**
   * `max_tokens` when the request sets no `maxOutputTokens` (the Messages API requires one).
   * @default 4096
   */
  maxOutputTokens?: number;
  /**
   * Set `cache_control: { type: "ephemeral" }` breakpoints: on the end of
   * the constant prefix (tools + system) and, rolling, on the last block of
   * the last two user turns.
   * @default true
   */
  promptCaching?: boolean;
  /** A ready-made SDK client; excludes `apiKey` and `baseURL`. */
  client?: Anthropic;
}

/**
 * A {@link ModelProvider} on Anthropic's Messages API, through the official
 * `@anthropic-ai/sdk`. The SDK client is created on first use. Every call is
 * bounded (`timeoutMs`, `idleTimeoutMs`), retried on its own terms
 * (`maxRetries`, `maxRetryAfterMs`), and fails only with `ProviderError`s
 * (or the caller's abort reason).
 *
 * @example
 * ```ts
 * const provider = new AnthropicProvider("claude-sonnet-5-5", { maxRetries: 4, timeoutMs: 120_000 });
 * const response = await provider.complete({ system: "Be brief.", messages, tools: [] });
 * ```
 */
export class AnthropicProvider implements ModelProvider {
  /** The version of core's model interface this adapter implements. */
  readonly specificationVersion = "rein-model-v1" as const;
  /** `"anthropic"`, in logs, session nodes and errors. */
  readonly providerId = "anthropic";
  /** The model used when a request names none. */
  readonly modelId: string;
  private readonly settings: AnthropicProviderSettings;
  private readonly limits: RequestLimits;
  private sdkClient: Anthropic | undefined;

  /**
   * @throws TypeError when `client` comes with `apiKey` or `baseURL`, or a request limit is not a valid number.
   * @throws ProviderConfigError (`variable: "ANTHROPIC_API_KEY"`) when, without a `client`, there is no
   * credential: no `apiKey`, `ANTHROPIC_API_KEY` or `ANTHROPIC_AUTH_TOKEN`.
   */
  constructor(modelId: string, settings: AnthropicProviderSettings = {}) {
    rejectConflictingOptions("AnthropicProvider", settings, ["apiKey", "baseURL"]);
    this.limits = resolveRequestLimits("AnthropicProvider", settings);
    if (settings.client === undefined) {
      const given = settings.apiKey !== undefined && settings.apiKey.trim() !== "";
      requireCredential(given || readEnv("ANTHROPIC_API_KEY") !== undefined || readEnv("ANTHROPIC_AUTH_TOKEN") !== undefined, {
        owner: "AnthropicProvider",
        provider: "anthropic",
        variable: "ANTHROPIC_API_KEY",
        alternatives: " (ANTHROPIC_AUTH_TOKEN works too), or pass { client }",
      });
    }
    this.modelId = modelId;
    this.settings = { ...settings };
    this.sdkClient = settings.client;
  }

  /** The SDK client, created on first use. Its own retries and timeout are overridden per request. */
  get client(): Anthropic {
    this.sdkClient ??= new (anthropicClientClass())({ apiKey: this.settings.apiKey, baseURL: this.settings.baseURL, maxRetries: 0 });
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
    const params = this.toParams(request);
    const call = this.startCall(options);
    try {
      const message = await call.send((requestOptions) => this.client.messages.create(params, requestOptions));
      return fromAnthropicMessage(message, request.responseFormat);
    } catch (error) {
      throw call.failure(error);
    } finally {
      call.close();
    }
  }

  /**
   * Streams one request: text and tool-argument deltas as they arrive, then
   * the assembled `response`, only once the stream reached `message_stop`.
   * Fails like {@link complete}, also for errors the API reports inside the
   * stream, a stream that ends early, and one that goes silent; after
   * `message_start`, the error's `reportedUsage` holds the counts reported.
   */
  async *stream(request: ModelRequest, options: ModelCallOptions = {}): AsyncIterable<ModelStreamEvent> {
    const params = { ...this.toParams(request), stream: true as const };
    const call = this.startCall(options);
    const assembler = new AnthropicStreamAssembler(request.responseFormat);
    let response: ModelResponse;
    try {
      const events = await call.send((requestOptions) => this.client.messages.create(params, requestOptions));
      for await (const event of call.read(events, "message_stop")) yield* assembler.push(event);
      // The SDK ends an aborted stream quietly; the caller must not mistake it for a whole turn.
      call.throwIfAborted();
      response = assembler.finish();
    } catch (error) {
      // What message_start (and any message_delta) reported is billed: it stays on the error.
      throw call.failure(error, assembler.reportedUsage());
    } finally {
      call.close();
    }
    yield { type: "response", response };
  }

  private startCall({ signal, onRetry }: ModelCallOptions): ProviderCall {
    const client = this.client;
    return new ProviderCall(
      {
        provider: "anthropic",
        settingsOwner: "AnthropicProvider",
        limits: this.limits,
        secrets: [client.apiKey, client.authToken].filter((secret): secret is string => typeof secret === "string"),
        describeFailure: describeAnthropicFailure,
      },
      signal,
      onRetry,
    );
  }

  private toParams(request: ModelRequest) {
    return toAnthropicParams(request, {
      modelId: this.modelId,
      maxOutputTokens: this.settings.maxOutputTokens ?? 4096,
      promptCaching: this.settings.promptCaching ?? true,
    });
  }
}
