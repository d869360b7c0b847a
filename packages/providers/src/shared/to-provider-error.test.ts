import {
  AuthenticationError,
  ContextOverflowError,
  OverloadedError,
  ProviderError,
  RateLimitError,
} from "@rein/core";
import { parseRetryAfter, toProviderError, type FailureInfo } from "./to-provider-error";

function failure(overrides: Partial<FailureInfo>): FailureInfo {
  return {
    provider: "openai",
    status: 400,
    apiMessage: "bad request",
    codes: [],
    headers: undefined,
    body: { error: "kept" },
    cause: undefined,
    ...overrides,
  };
}

describe("toProviderError", () => {
  it("maps 403 to AuthenticationError like 401", () => {
    expect(toProviderError(failure({ status: 403 }))).toBeInstanceOf(AuthenticationError);
  });

  it("recognises context overflow worded by vLLM and llama.cpp servers, without a code", () => {
    const vllm = "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.";
    const llamaCpp = "the request exceeds the available context size, try increasing it";
    expect(toProviderError(failure({ apiMessage: vllm }))).toBeInstanceOf(ContextOverflowError);
    expect(toProviderError(failure({ apiMessage: llamaCpp }))).toBeInstanceOf(ContextOverflowError);
    expect(toProviderError(failure({ apiMessage: "max_tokens must be at most 8192" }))).not.toBeInstanceOf(
      ContextOverflowError,
    );
  });

  it("maps in-stream errors (no status) by their type or code", () => {
    const streamed = (code: string) => toProviderError(failure({ status: undefined, apiMessage: "x", codes: [code] }));
    expect(streamed("overloaded_error")).toBeInstanceOf(OverloadedError);
    expect(streamed("rate_limit_exceeded")).toBeInstanceOf(RateLimitError);
    expect(streamed("context_length_exceeded")).toBeInstanceOf(ContextOverflowError);
    expect(streamed("server_error").constructor).toBe(ProviderError);
  });

  it("keeps provider, status, body and cause, and names the provider and status in the message", () => {
    const cause = new Error("sdk error");
    const error = toProviderError(failure({ status: 418, apiMessage: "I'm a teapot", cause }));
    expect(error).toMatchObject({ provider: "openai", status: 418, body: { error: "kept" }, cause });
    expect(error.message).toBe("openai request failed (HTTP 418): I'm a teapot");
  });
});

describe("parseRetryAfter", () => {
  it("reads retry-after-ms, retry-after seconds and retry-after dates", () => {
    expect(parseRetryAfter(new Headers({ "retry-after-ms": "250" }))).toBe(0.25);
    expect(parseRetryAfter(new Headers({ "retry-after": "7" }))).toBe(7);
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();
    expect(parseRetryAfter(new Headers({ "retry-after": inTenSeconds }))).toBeGreaterThanOrEqual(9);
    expect(parseRetryAfter(new Headers({ "retry-after": "soon" }))).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});
