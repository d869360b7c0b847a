import { GuardError, ReinError, UsageError } from "../errors/rein-error";
import { PolicyHeaderError, type PolicyHeaderErrorReason } from "./reach-errors";

describe("PolicyHeaderError", () => {
  it("is a UsageError (the caller's fault), not a guard refusal, and names itself", () => {
    const error = new PolicyHeaderError("malformed", "field 'd' must be a non-negative integer");
    expect(error.name).toBe("PolicyHeaderError");
    expect(error.reason).toBe("malformed");
    expect(PolicyHeaderError.isInstance(error)).toBe(true);
    expect(UsageError.isInstance(error)).toBe(true);
    expect(ReinError.isInstance(error)).toBe(true);
    expect(GuardError.isInstance(error)).toBe(false);
    expect(PolicyHeaderError.isInstance(new UsageError("x"))).toBe(false);
  });

  it.each<[PolicyHeaderErrorReason, RegExp]>([
    ["missing", /X-Agent-Policy header missing — send .*encodePolicyHeader\(budget\)/],
    ["malformed", /X-Agent-Policy header malformed: the detail — send the value of encodePolicyHeader\(budget\) unchanged/],
    ["bad-signature", /signature does not match: the detail — .*same REIN_POLICY_SECRET/],
    ["unsigned", /X-Agent-Policy header unsigned: the detail — this server requires a signed header: set the same REIN_POLICY_SECRET on the caller/],
  ])("says what is wrong and what to send (%s)", (reason, message) => {
    const detail = reason === "missing" ? undefined : "the detail";
    expect(new PolicyHeaderError(reason, detail).message).toMatch(message);
  });

  it("keeps the cause", () => {
    const cause = new Error("root");
    expect(new PolicyHeaderError("malformed", undefined, { cause }).cause).toBe(cause);
  });
});
