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
}

const contextOverflowCodes = new Set(["context_length_exceeded", "context_window_exceeded", "prompt_too_long"]);
// Anthropic: "prompt is too long: 210000 tokens > 200000 maximum". OpenAI: "This model's maximum context
// length is 128000 tokens" (vLLM says the same); llama.cpp: "exceeds the available context size".
const contextOverflowText = /prompt is too long|context[ _-]?(?:length|window|size)|maximum context/i;
const overloadedCodes = new Set(["overloaded_error", "server_overloaded", "overloaded"]);
const rateLimitCodes = new Set(["rate_limit_error", "rate_limit_exceeded"]);
const authenticationCodes = new Set(["authentication_error", "permission_error", "invalid_api_key"]);

/** Maps one failed request to the typed error the runtime reacts to. */
export function toProviderError(info: FailureInfo): ProviderError {
  const codes = info.codes.filter((code): code is string => typeof code === "string");
  const has = (set: ReadonlySet<string>) => codes.some((code) => set.has(code));
  const details = { provider: info.provider, status: info.status, body: info.body, cause: info.cause };
  const statusText = info.status === undefined ? "" : ` (HTTP ${info.status})`;
  const said = info.apiMessage ?? (info.cause instanceof Error ? info.cause.message : "no message");
  const prefix = `${info.provider} request failed${statusText}: ${said}`;

  if (info.status === 401 || info.status === 403 || has(authenticationCodes)) {
    return new AuthenticationError(`${prefix} — check the API key the provider was given`, details);
  }
  if (info.status === 429 || has(rateLimitCodes)) {
    const retryAfterSeconds = parseRetryAfter(info.headers);
    const wait = retryAfterSeconds === undefined ? "" : `; retry after ${retryAfterSeconds}s`;
    return new RateLimitError(`${prefix} — rate limited${wait}`, { ...details, retryAfterSeconds });
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


/** Maps a failure that is not an API error (connection refused, timeout, unreadable stream). */
export function toUnknownProviderError(provider: string, cause: unknown): ProviderError {
  return toProviderError({
    provider,
    status: undefined,
    apiMessage: undefined,
    codes: [],
    headers: undefined,
    body: undefined,
    cause,
  });
}
