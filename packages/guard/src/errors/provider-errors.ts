import type { PricedUsage } from "../spend/pricing";
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
  /** Token counts the provider reported for the request before it failed. */
  reportedUsage?: PricedUsage;
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
  /**
   * Token counts the provider reported for this request before it failed —
   * a stream that broke, went silent or sent an error event after its start
   * event had counted the input — or undefined when it reported none. Where
   * the stream showed more than its counts (text streamed past Anthropic's
   * 1-token `message_start` count), or a chat stream was cut after it began
   * without counts, the adapter fills in an estimate (4 characters a token).
   * The provider bills them, so the runtime charges them to the run (its
   * usage, reach budget and spend caps) although no answer came.
   */
  readonly reportedUsage: PricedUsage | undefined;

  constructor(message: string, details: ProviderErrorDetails) {
    super(message, { cause: details.cause });
    this.provider = details.provider;
    this.status = details.status;
    this.body = details.body;
    this.reportedUsage = details.reportedUsage;
  }

  /**
   * This error with `usage` as its {@link reportedUsage}: a copy of the same
   * class, message, stack and fields (the error itself is left as it is);
   * the error itself when `usage` is undefined.
   * @example
   * ```ts
   * if (ProviderError.isInstance(error)) throw error.withReportedUsage({ inputTokens: 1830, outputTokens: 1 });
   * ```
   */
  withReportedUsage(usage: PricedUsage | undefined): this {
    if (usage === undefined) return this;
    const copy = Object.create(Object.getPrototypeOf(this) as object, Object.getOwnPropertyDescriptors(this)) as this;
    Object.defineProperty(copy, "reportedUsage", { value: usage, enumerable: true, configurable: true, writable: false });
    return copy;
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
