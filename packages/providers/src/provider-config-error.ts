import { ProviderError } from "@rein/core";

/**
 * No model provider could be configured from the environment (or the
 * configuration names a provider that is not set up). The message says which
 * variables to set.
 *
 * It extends `ProviderError` (a `ReinError`) with `provider: "none"` because
 * `@rein/providers` does not depend on `@rein/guard`, where `ReinError` lives.
 *
 * @example
 * ```ts
 * try { createProvider(); } catch (error) {
 *   if (ProviderConfigError.isInstance(error)) console.error(error.message);
 * }
 * ```
 */
export class ProviderConfigError extends ProviderError {
  constructor(message: string) {
    super(message, { provider: "none" });
  }
}
