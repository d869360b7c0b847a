/** What a secret is replaced with. */
export const redactedMark = "[redacted]";

// Credentials in the forms servers and proxies echo them: "Bearer sk-…", "x-api-key: sk-…",
// `"api-key": "…"`, whatever the key, and the configured key itself wherever it appears.
const bearerToken = /\b(Bearer\s+)(?!\[redacted\])[^\s"',;)}\]]+/gi;
const apiKeyField = /\b((?:x-)?api[-_]?key["']?\s*[:=]\s*["']?)(?!\[redacted\])[^\s"',;)}\]]+/gi;

// Shorter "keys" (test placeholders) would blank out ordinary words.
const shortestSecret = 6;

/**
 * Removes credentials from text a server sent back: the given secrets
 * (the API key the client uses), and any `Bearer <token>` or
 * `x-api-key: <key>` echo.
 */
export function redactText(text: string, secrets: readonly string[]): string {
  let result = text.replace(bearerToken, `$1${redactedMark}`).replace(apiKeyField, `$1${redactedMark}`);
  for (const secret of secrets) {
    if (secret.length >= shortestSecret) result = result.split(secret).join(redactedMark);
  }
  return result;
}

/** A copy of a parsed body (or any JSON-like value) with every string redacted. */
export function redactValue(value: unknown, secrets: readonly string[], depth = 0): unknown {
  if (typeof value === "string") return redactText(value, secrets);
  if (depth > 20 || typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => redactValue(item, secrets, depth + 1));
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactValue(item, secrets, depth + 1)]));
}

/**
 * Redacts an error in place, and the errors in its `cause` chain: `message`,
 * `stack`, and every other own field holding text or parsed JSON (the body
 * an SDK error keeps in `error`, the API's message in `apiMessage`). In
 * place, because the SDK errors are the adapter's own catch and keep their
 * class.
 */
export function redactError<ErrorType>(error: ErrorType, secrets: readonly string[]): ErrorType {
  const seen = new Set<object>();
  let current: unknown = error;
  while (typeof current === "object" && current !== null && !seen.has(current) && seen.size < 10) {
    seen.add(current);
    const fields = current as Record<string, unknown>;
    for (const field of Object.getOwnPropertyNames(fields)) {
      if (field === "cause") continue;
      const value = fields[field];
      if (typeof value === "string" || (typeof value === "object" && value !== null && isPlainData(value))) {
        rewrite(fields, field, secrets);
      }
    }
    current = fields.cause;
  }
  return error;
}

function isPlainData(value: object): boolean {
  return Array.isArray(value) || Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null;
}

function rewrite(target: Record<string, unknown>, field: string, secrets: readonly string[]): void {
  const before = target[field];
  const after = redactValue(before, secrets);
  if (after === before) return;
  try {
    target[field] = after;
  } catch {
    // A frozen or getter-only field: define our own over it.
    Object.defineProperty(target, field, { value: after, configurable: true, writable: true });
  }
}
