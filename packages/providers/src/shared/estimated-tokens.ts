/**
 * Tokens reckoned for `characters` of text a provider did not count: 4 characters a token, the rule the runtime's
 * own request estimate uses (core's `estimateTokens`, checked against the reach budget before a request is sent).
 * @internal
 */
export function estimatedTokens(characters: number): number {
  return Math.ceil(characters / 4);
}
