import type { ModelProvider } from "@rein/core";
import { AnthropicProvider } from "./anthropic/anthropic-provider";
import { OpenAIProvider, placeholderApiKey } from "./openai/openai-provider";
import { MissingProviderError, ProviderConfigError } from "./provider-config-error";

/**
 * Model used by {@link createProvider} for Anthropic when `REIN_MODEL` is unset.
 * Not `claude-sonnet-4-5`: SDK 1.14.0 lists it as deprecated (end of life
 * 2026-11-30) and warns on every request.
 */
export const defaultAnthropicModel = "claude-sonnet-5-5";

/** Model used by {@link createProvider} for OpenAI when `REIN_MODEL` is unset. */
export const defaultOpenAIModel = "gpt-4.1";

/** The environment variables {@link createProvider} reads. */
export interface ProviderEnvironment {
  /** Selects {@link AnthropicProvider}. */
  readonly ANTHROPIC_API_KEY?: string;
  /** Base URL of the Anthropic Messages API (proxies, gateways). */
  readonly ANTHROPIC_BASE_URL?: string;
  /** Selects {@link OpenAIProvider} when no Anthropic key is set. */
  readonly OPENAI_API_KEY?: string;
  /** Selects {@link OpenAIProvider} on its own: an OpenAI-compatible server's `/v1` URL. */
  readonly OPENAI_BASE_URL?: string;
  /** Model id for whichever provider is picked. */
  readonly REIN_MODEL?: string;
  /** `"anthropic"` or `"openai"`, when both are configured and the default (Anthropic) is not wanted. */
  readonly REIN_PROVIDER?: string;
  /** Any other variable (so `process.env` fits); not read. */
  readonly [name: string]: string | undefined;
}

const missingMessage =
  "No model provider configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY " +
  "(or OPENAI_BASE_URL for an OpenAI-compatible server), or pass { provider }";

/**
 * Picks a model provider from environment variables: `ANTHROPIC_API_KEY`
 * selects {@link AnthropicProvider} (honouring `ANTHROPIC_BASE_URL`);
 * otherwise `OPENAI_API_KEY` or `OPENAI_BASE_URL` selects
 * {@link OpenAIProvider} on Chat Completions, so a local vLLM, llama.cpp or
 * Ollama server needs only its base URL. `REIN_MODEL` names the model
 * (default {@link defaultAnthropicModel} / {@link defaultOpenAIModel});
 * `REIN_PROVIDER` forces a provider when both are configured. Empty values
 * count as unset.
 *
 * @param env - the variables to read; `process.env` when omitted.
 * @throws {@link MissingProviderError} (a {@link ProviderConfigError}) when no provider is configured, saying what to set.
 * @throws {@link ProviderConfigError} when `REIN_PROVIDER` is unknown or names a provider that is not configured.
 *
 * @example
 * ```ts
 * // OPENAI_BASE_URL=http://localhost:11434/v1 REIN_MODEL=qwen3:8b
 * const provider = createProvider(); // OpenAIProvider("qwen3:8b") on the local server
 * ```
 */
export function createProvider(env: ProviderEnvironment = process.env): ModelProvider {
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === "" ? undefined : value;
  };
  const anthropicKey = read("ANTHROPIC_API_KEY");
  const openaiKey = read("OPENAI_API_KEY");
  const openaiBaseURL = read("OPENAI_BASE_URL");
  const model = read("REIN_MODEL");
  const chosen = read("REIN_PROVIDER")?.toLowerCase();

  if (chosen !== undefined && chosen !== "anthropic" && chosen !== "openai") {
    throw new ProviderConfigError(`REIN_PROVIDER must be "anthropic" or "openai", got ${JSON.stringify(chosen)}`);
  }
  const anthropicConfigured = anthropicKey !== undefined;
  const openaiConfigured = openaiKey !== undefined || openaiBaseURL !== undefined;

  if (chosen === "anthropic" && !anthropicConfigured) {
    throw new ProviderConfigError("REIN_PROVIDER is anthropic but ANTHROPIC_API_KEY is not set: set it, or unset REIN_PROVIDER", {
      provider: "anthropic",
    });
  }
  if (chosen === "openai" && !openaiConfigured) {
    throw new ProviderConfigError(
      "REIN_PROVIDER is openai but neither OPENAI_API_KEY nor OPENAI_BASE_URL is set: set one, or unset REIN_PROVIDER",
      { provider: "openai" },
    );
  }
  if (anthropicConfigured && chosen !== "openai") {
    return new AnthropicProvider(model ?? defaultAnthropicModel, {
      apiKey: anthropicKey,
      baseURL: read("ANTHROPIC_BASE_URL"),
    });
  }
  if (openaiConfigured) {
    return new OpenAIProvider(model ?? defaultOpenAIModel, {
      // Local servers take any key; the SDK insists on one.
      apiKey: openaiKey ?? placeholderApiKey,
      baseURL: openaiBaseURL,
    });
  }
  throw new MissingProviderError(missingMessage);
}
