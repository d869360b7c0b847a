/**
 * The provider SDKs, loaded when first needed: creating a provider (or
 * reading an SDK error) loads its SDK, importing `rein` loads none (each
 * takes 20-80 ms to load). Type-only imports elsewhere cost nothing.
 * @internal
 */
let anthropic: typeof import("@anthropic-ai/sdk") | undefined;
let openai: typeof import("openai") | undefined;

/** The `@anthropic-ai/sdk` module. @internal */
export function anthropicSdk(): typeof import("@anthropic-ai/sdk") {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (anthropic ??= require("@anthropic-ai/sdk") as typeof import("@anthropic-ai/sdk"));
}

/** The `openai` module. @internal */
export function openaiSdk(): typeof import("openai") {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (openai ??= require("openai") as typeof import("openai"));
}
