import { ProviderConfigError } from "@rein/core";

/** An environment variable, trimmed; an empty value counts as unset. @internal */
export function readEnv(name: string): string | undefined {
  const value = process.env[name]?.trim();
  return value === "" ? undefined : value;
}

/**
 * Throws a {@link ProviderConfigError} naming the variable to set when a
 * provider built without a `client` has no credential: the mistake shows
 * when the provider is constructed, not as the SDK's raw error (or a
 * `ProviderError`, a 502 from a server) on its first request.
 * @internal
 */
export function requireCredential(found: boolean, details: { owner: string; provider: string; variable: string; alternatives: string }): void {
  if (found) return;
  const { owner, provider, variable, alternatives } = details;
  throw new ProviderConfigError(`${owner}: no API key: set ${variable}, or pass { apiKey }${alternatives}`, { provider, variable });
}
