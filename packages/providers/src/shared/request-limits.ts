/**
 * The limits every adapter puts on one `complete()` or `stream()` call. They
 * apply per call, so they also govern a ready-made `client` passed in the
 * settings (the SDK's own retries and timeout are switched off per request).
 *
 * @example
 * ```ts
 * const limits: RequestLimitSettings = { timeoutMs: 120_000, idleTimeoutMs: 30_000, maxRetries: 3, maxRetryAfterMs: 10_000 };
 * const provider = new OpenAIProvider("gpt-4.1", limits);
 * ```
 */
export interface RequestLimitSettings {
  /**
   * The whole call in milliseconds: connecting, waiting for headers, reading
   * the body or the whole stream, and any retries and their waits. Past it
   * the request is aborted (its connection closed) and the call fails with
   * `ProviderTimeoutError` (`limit: "timeoutMs"`). Long streamed answers
   * need a larger value.
   * @default 600000 (ten minutes, the SDKs' own default)
   */
  timeoutMs?: number;
  /**
   * How long a stream may stay silent (no event reaching the adapter)
   * between its headers and its end event. Past it the request is aborted
   * and the call fails with `ProviderTimeoutError` (`limit: "idleTimeoutMs"`).
   * Only streams: a non-streamed answer arrives in one piece. The SDKs drop
   * keep-alive events (Anthropic `ping`) before the adapter sees them, so a
   * reasoning model that thinks silently for minutes needs a larger value.
   * @default 300000 (five minutes)
   */
  idleTimeoutMs?: number;
  /**
   * The longest `retry-after` (or `retry-after-ms`) wait the adapter sleeps
   * through before retrying. A server asking for more gets no retry: the
   * call fails at once with its typed error (`RateLimitError` with
   * `retryAfterMs` for a 429), so the caller decides. Every wait that is
   * slept through is reported first (`onRetry`, the runtime's
   * `model-retry` event and log line). Ten seconds: a short rate-limit
   * window is waited out, while a run told to wait 30 s or more says so at
   * once instead of looking hung for a minute.
   * @default 10000
   */
  maxRetryAfterMs?: number;
  /**
   * How many times a failed request is retried (HTTP 408, 409, 429, 5xx,
   * connection failures; a server's `x-should-retry` header wins), waiting
   * what `retry-after` says or backing off exponentially (0.5 s doubling to
   * 8 s). A stream is retried only before its first event.
   * @default 2
   */
  maxRetries?: number;
}

/** {@link RequestLimitSettings} with every default applied. */
export interface RequestLimits {
  readonly timeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly maxRetryAfterMs: number;
  readonly maxRetries: number;
}

const defaults: RequestLimits = { timeoutMs: 600_000, idleTimeoutMs: 300_000, maxRetryAfterMs: 10_000, maxRetries: 2 };

// setTimeout fires at once for anything longer.
const longestTimer = 2 ** 31 - 1;

/**
 * Applies the defaults and checks each limit, naming the option and what it
 * takes when one is wrong (a `TypeError` from the constructor).
 */
export function resolveRequestLimits(providerName: string, settings: RequestLimitSettings): RequestLimits {
  const check = (name: keyof RequestLimitSettings, minimum: number, integer: boolean): number => {
    const value = settings[name];
    if (value === undefined) return defaults[name];
    const valid =
      typeof value === "number" && Number.isFinite(value) && value >= minimum && value <= longestTimer && (!integer || Number.isInteger(value));
    if (!valid) {
      const expected = integer ? `an integer >= ${minimum}` : `a number of milliseconds >= ${minimum} and <= ${longestTimer}`;
      throw new TypeError(`${providerName}: ${name} must be ${expected}, got ${describeValue(value)}`);
    }
    return value;
  };
  return {
    timeoutMs: check("timeoutMs", 1, false),
    idleTimeoutMs: check("idleTimeoutMs", 1, false),
    maxRetryAfterMs: check("maxRetryAfterMs", 0, false),
    maxRetries: check("maxRetries", 0, true),
  };
}

function describeValue(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}
