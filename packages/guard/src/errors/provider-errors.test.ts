import { OverloadedError, ProviderError, ProviderTimeoutError } from "./provider-errors";

describe("ProviderError.reportedUsage", () => {
  const usage = { inputTokens: 1830, outputTokens: 1, cachedInputTokens: 1800, cacheCreationInputTokens: 0 };

  it("is undefined unless the provider reported usage before failing", () => {
    expect(new ProviderError("down", { provider: "anthropic" }).reportedUsage).toBeUndefined();
    expect(new ProviderError("down", { provider: "anthropic", reportedUsage: usage }).reportedUsage).toEqual(usage);
  });

  it("withReportedUsage gives a copy of the same class and fields carrying the usage, leaving the error as it was", () => {
    const cause = new Error("socket hang up");
    const error = new ProviderTimeoutError("went silent", { provider: "anthropic", limit: "idleTimeoutMs", timeoutMs: 200, cause });
    const charged = error.withReportedUsage(usage);
    expect(charged).not.toBe(error);
    expect(ProviderTimeoutError.isInstance(charged)).toBe(true);
    expect(charged).toBeInstanceOf(ProviderTimeoutError);
    expect(charged.name).toBe("ProviderTimeoutError");
    expect(charged.message).toBe("went silent");
    expect(charged.stack).toBe(error.stack);
    expect(charged.cause).toBe(cause);
    expect([charged.provider, charged.limit, charged.timeoutMs]).toEqual(["anthropic", "idleTimeoutMs", 200]);
    expect(charged.reportedUsage).toEqual(usage);
    expect(error.reportedUsage).toBeUndefined();
  });

  it("withReportedUsage(undefined) is the error itself", () => {
    const error = new OverloadedError("overloaded", { provider: "anthropic" });
    expect(error.withReportedUsage(undefined)).toBe(error);
  });
});
