/**
 * `Name: message` of an error (of any realm: checked by shape, not
 * `instanceof`), or a readable form of any other thrown value — `undefined`,
 * a string, a plain object — marked as such. Never throws.
 * @internal
 */
export function describeError(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const { name, message } = error as { name?: unknown; message?: unknown };
    if (typeof message === "string") return `${typeof name === "string" ? name : "Error"}: ${message}`;
  }
  if (error === undefined) return "undefined (a non-Error value was thrown)";
  try {
    return `${typeof error === "string" ? JSON.stringify(error) : String(JSON.stringify(error) ?? error)} (a non-Error value was thrown)`;
  } catch {
    return `${String(error)} (a non-Error value was thrown)`;
  }
}

/** The message of an error (or anything shaped like one), else {@link describeError}. Never throws. @internal */
export function errorMessage(error: unknown): string {
  if (typeof error === "object" && error !== null && typeof (error as { message?: unknown }).message === "string") {
    return (error as { message: string }).message;
  }
  try {
    return describeError(error);
  } catch {
    return "a value that cannot be shown";
  }
}
