/**
 * @rein/providers — adapters from Rein's ModelProvider interface to the
 * official Anthropic and OpenAI SDKs, and `createProvider()`, which picks one
 * from the environment.
 * @packageDocumentation
 */
export { AnthropicProvider } from "./anthropic/anthropic-provider";
export type { AnthropicProviderSettings } from "./anthropic/anthropic-provider";
export { OpenAIProvider } from "./openai/openai-provider";
export type { OpenAIApi, OpenAIProviderSettings } from "./openai/openai-provider";
export type { RequestLimitSettings } from "./shared/request-limits";
export { createProvider, defaultAnthropicModel, defaultOpenAIModel } from "./create-provider";
export type { ProviderEnvironment } from "./create-provider";
export { ProviderConfigError, MissingProviderError } from "./provider-config-error";
