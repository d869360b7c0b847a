import { openaiSdk } from "../shared/lazy-sdk";
import type { ProviderError } from "@rein/core";
import { toProviderError, unknownFailure, type FailureInfo } from "../shared/to-provider-error";

/**
 * What the OpenAI SDK threw, in the SDK-neutral form the shared mapping
 * reads. The SDK keeps the body's `error` object (`{ message, type, code,
 * param }`) in `error.error`.
 */
export function describeOpenAIFailure(error: unknown): FailureInfo {
  // Only a loaded SDK throws its errors (a client the caller passed in loaded it too).
  const { APIConnectionError, APIError } = openaiSdk();
  // APIConnectionError extends APIError, with no status: refused, reset, timed out.
  if (error instanceof APIConnectionError) return unknownFailure("openai", error, "connection");
  if (error instanceof APIError) {
    const body = error.error as { message?: unknown } | undefined;
    return {
      provider: "openai",
      status: error.status,
      apiMessage: typeof body?.message === "string" ? body.message : undefined,
      codes: [error.code, error.type],
      headers: error.headers,
      body: error.error,
      cause: error,
      kind: "api",
    };
  }
  return unknownFailure("openai", error, "other");
}

/**
 * Maps an error the Responses API reports inside a stream (an `error` event or
 * a `response.failed` event's `response.error`), which arrives after HTTP 200.
 */
export function fromStreamedOpenAIError(error: { code?: string | null; message?: string } | null): ProviderError {
  return toProviderError({
    provider: "openai",
    status: undefined,
    apiMessage: error?.message ?? "the response failed without an error message",
    codes: [error?.code],
    headers: undefined,
    body: error,
    cause: undefined,
  });
}
