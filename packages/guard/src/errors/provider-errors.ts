import { SystemFailureError } from "./rein-error";

/** Fields shared by every provider failure. */
export interface ProviderErrorDetails {
  /** Provider name (`"anthropic"`, `"openai"`). */
  provider: string;
  /** HTTP status, when the failure came from a response. */
  status?: number;
  /** The response body (parsed JSON or text), kept for diagnosis. */
  body?: unknown;
  cause?: unknown;
}

/**
 * A model provider failed: a system failure ({@link SystemFailureError}),
 * not the model's or the developer's fault. Keeps the HTTP status and body.
 */
export class ProviderError extends SystemFailureError {
  static {
    this.defineErrorName("ProviderError");
  }

  /** Provider name (`"anthropic"`, `"openai"`). */
  readonly provider: string;
  /** HTTP status, when the failure came from a response. */
  readonly status: number | undefined;
  /** The response body (parsed JSON or text), kept for diagnosis. */
  readonly body: unknown;

  constructor(message: string, details: ProviderErrorDetails) {
    super(message, { cause: details.cause });
    this.provider = details.provider;
    this.status = details.status;
    this.body = details.body;
  }
}

/** The provider refused the credentials (HTTP 401/403). */
export class AuthenticationError extends ProviderError {
  static {
    this.defineErrorName("AuthenticationError");
  }
}

/** The provider rate-limited the request (HTTP 429). */
export class RateLimitError extends ProviderError {
  static {
    this.defineErrorName("RateLimitError");
  }

  /** Seconds the provider asked to wait, from `retry-after`, when it said. */
  readonly retryAfterSeconds: number | undefined;
  /** Milliseconds the provider asked to wait (`retry-after-ms` or `retry-after`), when it said. */
  readonly retryAfterMs: number | undefined;

  constructor(message: string, details: ProviderErrorDetails & { retryAfterSeconds?: number; retryAfterMs?: number }) {
    super(message, details);
    this.retryAfterMs = details.retryAfterMs ?? (details.retryAfterSeconds === undefined ? undefined : details.retryAfterSeconds * 1000);
    this.retryAfterSeconds = details.retryAfterSeconds ?? (details.retryAfterMs === undefined ? undefined : details.retryAfterMs / 1000);
  }
}

/** The provider is overloaded (Anthropic 529, HTTP 503). */
export class OverloadedError extends ProviderError {
  static {
    this.defineErrorName("OverloadedError");
  }
}

/**
 * The request did not fit the model's context window. The runtime reacts by
 * compacting history and retrying.
 */
export class ContextOverflowError extends ProviderError {
  static {
    this.defineErrorName("ContextOverflowError");
  }
}

/**
 * A provider request ran past one of its limits and was aborted (its
 * connection closed): the whole request took longer than `timeoutMs`, or a
 * stream went silent for longer than `idleTimeoutMs`. The message names the
 * limit and how to raise it.
 *
 * @example
 * ```ts
 * if (ProviderTimeoutError.isInstance(error)) console.log(error.limit, error.timeoutMs);
 * ```
 */
export class ProviderTimeoutError extends ProviderError {
  static {
    this.defineErrorName("ProviderTimeoutError");
  }

  /** Which limit ran out: the whole request (`"timeoutMs"`) or silence inside a stream (`"idleTimeoutMs"`). */
  readonly limit: "timeoutMs" | "idleTimeoutMs";
  /** The limit that ran out, in milliseconds. */
  readonly timeoutMs: number;

  constructor(
    message: string,
    details: ProviderErrorDetails & { limit: "timeoutMs" | "idleTimeoutMs"; timeoutMs: number },
  ) {
    super(message, details);
    this.limit = details.limit;
    this.timeoutMs = details.timeoutMs;
  }
}
