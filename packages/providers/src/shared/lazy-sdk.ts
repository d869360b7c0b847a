/**
 * The provider SDKs, loaded when first needed: creating a provider (or
 * reading an SDK error) loads its SDK, importing `rein` loads none (each
 * takes 20-80 ms to load). Type-only imports elsewhere cost nothing.
 * @internal
 */
let anthropicClient: typeof import("@anthropic-ai/sdk/client") | undefined;
let anthropicErrors: typeof import("@anthropic-ai/sdk/error") | undefined;
let openai: typeof import("openai") | undefined;

/**
 * The Anthropic client class, from the SDK's `client` entry: the package's
 * index also loads helpers the adapter never uses (~85 ms instead of ~113 ms here).
 * @internal
 */
export function anthropicClientClass(): typeof import("@anthropic-ai/sdk/client").Anthropic {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (anthropicClient ??= require("@anthropic-ai/sdk/client") as typeof import("@anthropic-ai/sdk/client")).Anthropic;
}

/** The Anthropic SDK's error classes (its `error` entry: ~3 ms, no client). @internal */
export function anthropicErrorClasses(): typeof import("@anthropic-ai/sdk/error") {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (anthropicErrors ??= require("@anthropic-ai/sdk/error") as typeof import("@anthropic-ai/sdk/error"));
}

/** The `openai` module. @internal */
export function openaiSdk(): typeof import("openai") {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (openai ??= require("openai") as typeof import("openai"));
}
