import { APIError } from "openai";
import { ProviderError } from "@rein/core";
import { toProviderError, toUnknownProviderError } from "../shared/to-provider-error";

/**
 * Maps whatever the OpenAI SDK threw to Rein's typed errors. The SDK keeps the
 * body's `error` object (`{ message, type, code, param }`) in `error.error`.
 */
export function fromOpenAIError(error: unknown): ProviderError {
  // Already mapped, e.g. an error event read from a stream.
  if (ProviderError.isInstance(error)) return error;
  if (error instanceof APIError) {
    const body = error.error as { message?: unknown } | undefined;
    return toProviderError({
      provider: "openai",
      status: error.status,
      apiMessage: typeof body?.message === "string" ? body.message : undefined,
      codes: [error.code, error.type],
      headers: error.headers,
      body: error.error,
      cause: error,
    });
  }
  return toUnknownProviderError("openai", error);
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
