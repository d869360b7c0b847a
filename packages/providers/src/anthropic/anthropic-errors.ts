import { anthropicErrorClasses } from "../shared/lazy-sdk";
import { unknownFailure, type FailureInfo } from "../shared/to-provider-error";

/**
 * What the Anthropic SDK threw, in the SDK-neutral form the shared mapping
 * reads. The SDK keeps the whole response body in `error.error`
 * (`{ type: "error", error: { type, message } }`).
 */
export function describeAnthropicFailure(error: unknown): FailureInfo {
  // Only a loaded SDK throws its errors (a client the caller passed in loaded it too).
  const { APIConnectionError, APIError } = anthropicErrorClasses();
  // APIConnectionError extends APIError, with no status: refused, reset, timed out.
  if (error instanceof APIConnectionError) return unknownFailure("anthropic", error, "connection");
  if (error instanceof APIError) {
    return {
      provider: "anthropic",
      status: error.status,
      apiMessage: error.apiMessage ?? undefined,
      codes: [error.type, error.errorCode],
      headers: error.headers,
      body: error.error,
      cause: error,
      kind: "api",
    };
  }
  return unknownFailure("anthropic", error, "other");
}
