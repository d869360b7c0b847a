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
 * (`invalid_body`, `invalid_policy`, `invalid_run_id`, `missing_policy` 400; `reach_exceeded`
 * 403; `not_found` 404; `run_conflict` 409; `body_too_large` 413;
 * `provider_error` 502; `shutting_down` 503).
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
  | "reach_exceeded"
  | "not_found"
  | "run_conflict"
  | "body_too_large"
  | "provider_error"
  | "shutting_down";

/** @internal the status of each error type. */
export const STATUS_OF: Readonly<Record<ErrorType, 400 | 403 | 404 | 409 | 413 | 502 | 503>> = {
  invalid_body: 400,
  invalid_policy: 400,
  invalid_run_id: 400,
  missing_policy: 400,
  reach_exceeded: 403,
  not_found: 404,
  run_conflict: 409,
  body_too_large: 413,
  provider_error: 502,
  shutting_down: 503,
};

/** @internal builds an {@link ErrorBody}. */
export function errorBody(type: ErrorType, message: string): ErrorBody {
  return { error: { type, message } };
}
