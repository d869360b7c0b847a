/**
 * The body of every error response: a typed error a client can switch on.
 * @example
 * ```ts
 * { error: { type: "invalid_body", message: "body.entry must be a string naming a listed entry" } }
 * ```
 */
export interface ErrorBody {
  readonly error: { readonly type: ErrorType; readonly message: string };
}

/**
 * The `type` of an {@link ErrorBody}; each maps to one status code
 * (`invalid_body`, `invalid_policy`, `invalid_run_id`, `missing_policy` 400;
 * `unauthorized` 401; `forbidden`, `reach_exceeded` 403; `not_found` 404;
 * `run_conflict` 409; `body_too_large` 413; `budget_exhausted` 429 (a key's
 * spend cap, with `Retry-After`); `queue_not_configured` 501
 * (`Prefer: respond-async` on a server without a queue); `provider_error` 502;
 * `shutting_down`, `store_unavailable` 503).
 * @example
 * ```ts
 * if (body.error.type === "reach_exceeded") return fallback();
 * ```
 */
export type ErrorType =
  | "invalid_body"
  | "invalid_policy"
  | "invalid_run_id"
  | "missing_policy"
  | "unauthorized"
  | "forbidden"
  | "reach_exceeded"
  | "not_found"
  | "run_conflict"
  | "body_too_large"
  | "budget_exhausted"
  | "provider_error"
  | "queue_not_configured"
  | "shutting_down"
  | "store_unavailable";

/** @internal the status of each error type. */
export const STATUS_OF: Readonly<Record<ErrorType, 400 | 401 | 403 | 404 | 409 | 413 | 429 | 501 | 502 | 503>> = {
  invalid_body: 400,
  invalid_policy: 400,
  invalid_run_id: 400,
  missing_policy: 400,
  unauthorized: 401,
  forbidden: 403,
  reach_exceeded: 403,
  not_found: 404,
  run_conflict: 409,
  body_too_large: 413,
  budget_exhausted: 429,
  provider_error: 502,
  queue_not_configured: 501,
  shutting_down: 503,
  store_unavailable: 503,
};

/** @internal builds an {@link ErrorBody}. */
export function errorBody(type: ErrorType, message: string): ErrorBody {
  return { error: { type, message } };
}

/** @internal a request the server refuses with a typed 4xx/503, thrown from anywhere inside a route and answered by `app.onError`. */
export class RequestError extends Error {
  constructor(
    readonly type: ErrorType,
    message: string,
    /** Sent as `Retry-After` (a 429 `budget_exhausted`). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/**
 * @internal `text` (a value the client sent) cut to at most `max`
 * characters for an error message, saying how long it was: no answer echoes
 * unbounded input.
 */
export function bounded(text: string, max = 64): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}
