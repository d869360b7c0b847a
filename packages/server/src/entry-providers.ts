import { ProviderConfigError } from "rein";
import { isAgentClass, type Entries } from "./entries";

/**
 * Checks, before a server starts, that every class entry has a model
 * provider: the one of its class's `runtime`, or the default one (read
 * from the environment by `rein`). An entry whose first request would fail
 * with a {@link ProviderConfigError} is reported now, so a server never
 * starts only to answer every run with that error. Each class is
 * constructed once, as a request would; its own copy of `@rein/core`
 * resolves the provider. Factory entries are not checked: what they build
 * is known only when they are called.
 *
 * @throws {@link ProviderConfigError} naming the entries and what to set, with the first entry's error as `cause`
 *
 * @example
 * ```ts
 * checkEntryProviders({ research: [Researcher, "research"] }); // throws when no provider is configured
 * ```
 */
export function checkEntryProviders(entries: Entries): void {
  const missing: { name: string; error: unknown }[] = [];
  for (const [name, [target]] of Object.entries(entries)) {
    if (!isAgentClass(target)) continue;
    try {
      void (new target() as unknown as { readonly runtime: { readonly provider: unknown } }).runtime.provider;
    } catch (error) {
      if (!ProviderConfigError.isInstance(error)) throw error;
      missing.push({ name, error });
    }
  }
  if (missing.length === 0) return;
  const first = missing[0]!.error as ProviderConfigError;
  throw new ProviderConfigError(
    `entr${missing.length === 1 ? "y" : "ies"} ${missing.map(({ name }) => name).join(", ")} ${missing.length === 1 ? "has" : "have"} no model provider: ${first.message}`,
    { provider: first.provider, ...(first.variable === undefined ? {} : { variable: first.variable }), cause: first },
  );
}
