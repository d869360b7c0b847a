import { APIError } from "@anthropic-ai/sdk";
import { ProviderError } from "@rein/core";
import { toProviderError, toUnknownProviderError } from "../shared/to-provider-error";

/**
 * Maps whatever the Anthropic SDK threw to Rein's typed errors. The SDK keeps
 * the whole response body in `error.error` (`{ type: "error", error: { type, message } }`).
 */
export function fromAnthropicError(error: unknown): ProviderError {
  // Already mapped, e.g. an error event read from a stream.
  if (ProviderError.isInstance(error)) return error;
  if (error instanceof APIError) {
    return toProviderError({
      provider: "anthropic",
      status: error.status,
      apiMessage: error.apiMessage ?? undefined,
      codes: [error.type, error.errorCode],
      headers: error.headers,
      body: error.error,
      cause: error,
    });
  }
  return toUnknownProviderError("anthropic", error);
}
