import type { Usage } from "@rein/core";

/**
 * Tokens reckoned for `characters` of text a provider did not count: 4 characters a token, the rule the runtime's
 * own request estimate uses (core's `estimateTokens`, checked against the reach budget before a request is sent).
 * @internal
 */
export function estimatedTokens(characters: number): number {
  return Math.ceil(characters / 4);
}

/**
 * The usage a stream that reported none is reckoned at: `inputTokens` for what was sent, and
 * {@link estimatedTokens} of the `written` characters that came back; no cache counts.
 * @internal
 */
export function estimatedUsage(inputTokens: number, written: number): Usage {
  return { inputTokens, outputTokens: estimatedTokens(written), cachedInputTokens: 0, cacheCreationInputTokens: 0 };
}
