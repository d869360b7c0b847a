import {
  AuthenticationError,
  ContextOverflowError,
  OverloadedError,
  ProviderError,
  RateLimitError,
} from "@rein/core";

/** What an adapter knows about one failed request, whatever SDK it came from. */
export interface FailureInfo {
  readonly provider: string;
  /** HTTP status; undefined for connection failures and errors sent inside a stream. */
  readonly status: number | undefined;
  /** The API's own error text, when it sent one. */
  readonly apiMessage: string | undefined;
  /** The API's error type (`"overloaded_error"`) or code (`"context_length_exceeded"`). */
  readonly codes: ReadonlyArray<string | null | undefined>;
  readonly headers: Headers | undefined;
  readonly body: unknown;
  readonly cause: unknown;
  /**
   * Where it failed: the API answered with an error (`"api"`, also an error
   * event inside a stream), the request never got an answer (`"connection"`:
   * refused, reset; worth retrying), or anything else (`"other"`).
   * @default "api"
   */
  readonly kind?: "api" | "connection" | "other";
}

/** How the message of a rate-limit error explains a wait that was not taken. */
export interface RetryContext {
  /** The adapter's `maxRetryAfterMs`; a longer `retry-after` is named in the message. */
  readonly maxRetryAfterMs?: number;
}

const contextOverflowCodes = new Set(["context_length_exceeded", "context_window_exceeded", "prompt_too_long"]);
// Anthropic: "prompt is too long: 210000 tokens > 200000 maximum". OpenAI: "This model's maximum context
// length is 128000 tokens" (vLLM says the same); llama.cpp: "exceeds the available context size".
const contextOverflowText = /prompt is too long|context[ _-]?(?:length|window|size)|maximum context/i;
const overloadedCodes = new Set(["overloaded_error", "server_overloaded", "overloaded"]);
const rateLimitCodes = new Set(["rate_limit_error", "rate_limit_exceeded"]);
const authenticationCodes = new Set(["authentication_error", "permission_error", "invalid_api_key"]);

/** Maps one failed request to the typed error the runtime reacts to. */
export function toProviderError(info: FailureInfo, context: RetryContext = {}): ProviderError {
  const codes = info.codes.filter((code): code is string => typeof code === "string");
  const has = (set: ReadonlySet<string>) => codes.some((code) => set.has(code));
  const details = { provider: info.provider, status: info.status, body: info.body, cause: info.cause };
  const statusText = info.status === undefined ? "" : ` (HTTP ${info.status})`;
  const said = info.apiMessage ?? describeThrown(info.cause);
  const prefix = `${info.provider} request failed${statusText}: ${said}`;

  if (info.status === 401 || info.status === 403 || has(authenticationCodes)) {
    return new AuthenticationError(`${prefix} — check the API key the provider was given`, details);
  }
  if (info.status === 429 || has(rateLimitCodes)) {
    const retryAfterSeconds = parseRetryAfter(info.headers);
    const retryAfterMs = retryAfterSeconds === undefined ? undefined : Math.round(retryAfterSeconds * 1000);
    let wait = retryAfterSeconds === undefined ? "" : `; retry after ${retryAfterSeconds}s`;
    if (retryAfterMs !== undefined && context.maxRetryAfterMs !== undefined && retryAfterMs > context.maxRetryAfterMs) {
      wait +=
        ` (more than maxRetryAfterMs = ${context.maxRetryAfterMs} ms, so it was not waited for here:` +
        ` retry later, or raise maxRetryAfterMs to wait inside the call)`;
    }
    return new RateLimitError(`${prefix} — rate limited${wait}`, { ...details, retryAfterSeconds, retryAfterMs });
  }
  if (info.status === 529 || info.status === 503 || has(overloadedCodes)) {
    return new OverloadedError(`${prefix} — the provider is overloaded, try again later`, details);
  }
  const clientError = info.status === undefined || (info.status >= 400 && info.status < 500);
  if (clientError && (has(contextOverflowCodes) || contextOverflowText.test(info.apiMessage ?? ""))) {
    return new ContextOverflowError(`${prefix} — the request does not fit the model's context window`, details);
  }
  return new ProviderError(prefix, details);
}

/**
 * Seconds to wait from `retry-after-ms` (milliseconds, sent by both APIs) or
 * `retry-after` (seconds or an HTTP date).
 */
export function parseRetryAfter(headers: Headers | undefined): number | undefined {
  const milliseconds = Number.parseFloat(headers?.get("retry-after-ms") ?? "");
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds / 1000;
  const value = headers?.get("retry-after");
  if (value == null || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - Date.now()) / 1000));
}


/** What a failure that is not an API error says: connection refused or reset, unreadable body, a bug. */
export function unknownFailure(provider: string, cause: unknown, kind: "connection" | "other"): FailureInfo {
  return { provider, status: undefined, apiMessage: undefined, codes: [], headers: undefined, body: undefined, cause, kind };
}

/**
 * `Name: message` of a thrown error, or a readable form of a thrown
 * non-Error (`undefined`, a string, a plain object), marked as such.
 */
export function describeThrown(thrown: unknown): string {
  if (typeof thrown === "object" && thrown !== null && typeof (thrown as { message?: unknown }).message === "string") {
    const { name, message } = thrown as { name?: unknown; message: string };
    const cause = (thrown as { cause?: unknown }).cause;
    // undici says only "fetch failed" or "terminated"; the reason is in the cause.
    const because = cause instanceof Error && cause.message !== "" && cause.message !== message ? ` (${cause.message})` : "";
    return `${typeof name === "string" && name !== "Error" ? `${name}: ` : ""}${message}${because}`;
  }
  let shown: string;
  try {
    shown = thrown === undefined ? "undefined" : (JSON.stringify(thrown) ?? String(thrown));
  } catch {
    shown = String(thrown);
  }
  return `${shown} (a non-Error value was thrown)`;
}
