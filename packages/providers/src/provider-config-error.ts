/**
 * `ProviderConfigError` (invalid model-provider configuration, a
 * `UsageError`) and its subclass `MissingProviderError` (no provider
 * configured at all) are defined in `@rein/guard` and re-exported by
 * `@rein/core`, so the Runtime and {@link createProvider} throw the same
 * "no provider" class; this module re-exports them for existing imports
 * from `@rein/providers`.
 *
 * @example
 * ```ts
 * try { createProvider(); } catch (error) {
 *   if (ProviderConfigError.isInstance(error)) console.error(error.message);
 * }
 * ```
 */
export { ProviderConfigError, MissingProviderError } from "@rein/core";
