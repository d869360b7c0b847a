/**
 * Throws when a provider is given a ready-made SDK client together with
 * options that would configure a client of its own: one of them would be
 * silently ignored.
 */
export function rejectConflictingOptions<Settings extends { client?: unknown }>(
  providerName: string,
  settings: Settings,
  clientOptions: ReadonlyArray<keyof Settings & string>,
): void {
  if (settings.client === undefined) return;
  const conflicting = clientOptions.filter((name) => settings[name] !== undefined);
  if (conflicting.length === 0) return;
  throw new TypeError(
    `${providerName}: Cannot provide both ${conflicting.join(", ")} and client — ` +
      `configure the client you pass, or drop it and pass ${conflicting.join(", ")}`,
  );
}
