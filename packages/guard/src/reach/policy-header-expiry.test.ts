import { createHmac } from "node:crypto";
import { PolicyHeaderError, type PolicyHeaderErrorReason } from "./reach-errors";
import { DEFAULT_POLICY_HEADER_TTL_MS, POLICY_HEADER_CLOCK_SKEW_MS, decodePolicyHeader, encodePolicyHeader, inspectPolicyHeader } from "./policy-header";

const NOW = 1_800_000_000_000;
const payloadOf = (header: string): Record<string, unknown> => JSON.parse(Buffer.from(header.split(".")[0]!, "base64url").toString("utf8")) as Record<string, unknown>;
const base64url = (text: string): string => Buffer.from(text, "utf8").toString("base64url");
const signed = (secret: string, json: string): string => {
  const payload = base64url(json);
  return `${payload}.${createHmac("sha256", secret).update(payload).digest("base64url")}`;
};

function refusal(fn: () => unknown): PolicyHeaderErrorReason {
  try {
    fn();
  } catch (error) {
    if (PolicyHeaderError.isInstance(error)) return error.reason;
    throw error;
  }
  throw new Error("expected a PolicyHeaderError, got a budget");
}

let saved: string | undefined;
beforeEach(() => {
  saved = process.env.REIN_POLICY_SECRET;
  delete process.env.REIN_POLICY_SECRET;
});
afterEach(() => {
  if (saved === undefined) delete process.env.REIN_POLICY_SECRET;
  else process.env.REIN_POLICY_SECRET = saved;
});

describe("a signed header's expiry and issuing run", () => {
  it("a signed header carries v = now + 5 min and r = the issuing run; inspectPolicyHeader returns them", () => {
    const header = encodePolicyHeader({ depth: 2 }, { secret: "s", runId: "run-1", now: NOW });
    expect(payloadOf(header)).toEqual({ d: 2, v: NOW + DEFAULT_POLICY_HEADER_TTL_MS, r: "run-1" });
    expect(DEFAULT_POLICY_HEADER_TTL_MS).toBe(300_000);
    expect(inspectPolicyHeader(header, { secret: "s", now: NOW })).toEqual({ budget: { depth: 2 }, signed: true, expiresAt: NOW + 300_000, runId: "run-1" });
    expect(decodePolicyHeader(header, { secret: "s", now: NOW })).toEqual({ depth: 2 });
  });

  it("accepted until its expiry (replayed as often as it is sent meanwhile), refused as expired from then on and a year later", () => {
    const header = encodePolicyHeader({ depth: 2 }, { secret: "s", ttlMs: 1_000, now: NOW });
    for (let i = 0; i < 1_000; i++) expect(decodePolicyHeader(header, { secret: "s", now: NOW + 999 })).toEqual({ depth: 2 });
    expect(refusal(() => decodePolicyHeader(header, { secret: "s", now: NOW + 1_000 }))).toBe("expired");
    expect(refusal(() => decodePolicyHeader(header, { secret: "s", now: NOW + 365 * 86_400_000 }))).toBe("expired");
    expect(() => decodePolicyHeader(header, { secret: "s", now: NOW + 1_000 })).toThrow(/X-Agent-Policy header expired: expired 0 s ago — .*fresh one/);
  });

  it("a header whose expiry lies further ahead than maxTtlMs (default 5 min + 1 min of clock skew) is refused as expired: a captured one cannot be replayed for a day or a year", () => {
    const DAY = 86_400_000;
    // A caller whose clock runs a day ahead, and one that asked for a year.
    const skewed = encodePolicyHeader({ depth: 2 }, { secret: "s", now: NOW + DAY });
    const yearLong = encodePolicyHeader({ depth: 2 }, { secret: "s", ttlMs: 365 * DAY, now: NOW });
    expect(refusal(() => decodePolicyHeader(skewed, { secret: "s", now: NOW }))).toBe("expired");
    expect(refusal(() => decodePolicyHeader(yearLong, { secret: "s", now: NOW }))).toBe("expired");
    expect(() => decodePolicyHeader(yearLong, { secret: "s", now: NOW })).toThrow(/valid 31536000 s more, beyond the 360 s this callee accepts \(maxTtlMs/);
    // A caller's clock up to a minute ahead is accepted; maxTtlMs raises the bound for callers that encode with a longer ttlMs.
    expect(POLICY_HEADER_CLOCK_SKEW_MS).toBe(60_000);
    expect(decodePolicyHeader(encodePolicyHeader({ depth: 2 }, { secret: "s", now: NOW + 60_000 }), { secret: "s", now: NOW })).toEqual({ depth: 2 });
    expect(refusal(() => decodePolicyHeader(encodePolicyHeader({ depth: 2 }, { secret: "s", now: NOW + 60_001 }), { secret: "s", now: NOW }))).toBe("expired");
    expect(decodePolicyHeader(encodePolicyHeader({ depth: 2 }, { secret: "s", ttlMs: 3_600_000, now: NOW }), { secret: "s", now: NOW, maxTtlMs: 3_600_000 })).toEqual({ depth: 2 });
    expect(() => decodePolicyHeader(skewed, { secret: "s", now: NOW, maxTtlMs: 0 })).toThrow(TypeError);
  });

  it("a header signed without an expiry is refused as expired (it could be replayed forever)", () => {
    expect(refusal(() => decodePolicyHeader(signed("s", '{"d":2}'), { secret: "s" }))).toBe("expired");
  });

  it("an unsigned header carries no expiry nor run; one with an expiry in the past is refused even without a secret", () => {
    const header = encodePolicyHeader({ depth: 2 }, { runId: "run-1", now: NOW });
    expect(payloadOf(header)).toEqual({ d: 2 });
    expect(inspectPolicyHeader(header)).toEqual({ budget: { depth: 2 }, signed: false });
    expect(refusal(() => decodePolicyHeader(base64url(`{"d":2,"v":${NOW}}`), { now: NOW + 1 }))).toBe("expired");
    expect(decodePolicyHeader(base64url(`{"d":2,"v":${NOW}}`), { now: NOW - 1 })).toEqual({ depth: 2 });
  });

  it.each([
    ["v a string", '{"d":1,"v":"soon"}'],
    ["v negative", '{"d":1,"v":-1}'],
    ["v after the year 275760", '{"d":1,"v":9e15}'],
    ["r empty", '{"d":1,"r":""}'],
    ["r with a space", '{"d":1,"r":"a b"}'],
    ["r a number", '{"d":1,"r":5}'],
  ])("%s is malformed", (_, json) => {
    expect(refusal(() => decodePolicyHeader(base64url(json)))).toBe("malformed");
  });

  it("bad ttlMs, runId and now options are TypeErrors", () => {
    expect(() => encodePolicyHeader({ depth: 1 }, { ttlMs: 0 })).toThrow(/ttlMs/);
    expect(() => encodePolicyHeader({ depth: 1 }, { ttlMs: Infinity })).toThrow(/ttlMs/);
    expect(() => encodePolicyHeader({ depth: 1 }, { runId: "a b" })).toThrow(/runId/);
    expect(() => encodePolicyHeader({ depth: 1 }, { now: NaN })).toThrow(/now/);
    expect(() => decodePolicyHeader(encodePolicyHeader({ depth: 1 }), { now: "x" as never })).toThrow(/now/);
  });
});

describe("secret rotation", () => {
  it("REIN_POLICY_SECRET=new,old: the first signs, a header signed with either is accepted, any other is a bad signature", () => {
    const fromOld = encodePolicyHeader({ depth: 3 }, { secret: "old" });
    process.env.REIN_POLICY_SECRET = "new, old";
    const fromNew = encodePolicyHeader({ depth: 3 });
    expect(decodePolicyHeader(fromNew, { secret: "new" })).toEqual({ depth: 3 });
    expect(refusal(() => decodePolicyHeader(fromNew, { secret: "old" }))).toBe("bad-signature");
    expect(decodePolicyHeader(fromNew)).toEqual({ depth: 3 });
    expect(decodePolicyHeader(fromOld)).toEqual({ depth: 3 });
    expect(refusal(() => decodePolicyHeader(encodePolicyHeader({ depth: 3 }, { secret: "other" })))).toBe("bad-signature");
    // Once the old secret is dropped, its headers stop working.
    process.env.REIN_POLICY_SECRET = "new";
    expect(refusal(() => decodePolicyHeader(fromOld))).toBe("bad-signature");
  });

  it("the secret option takes a list too (the first signs); an empty list or an empty entry is a TypeError; ',,' in the variable is unset", () => {
    const header = encodePolicyHeader({ depth: 1 }, { secret: ["a", "b"] });
    expect(decodePolicyHeader(header, { secret: "a" })).toEqual({ depth: 1 });
    expect(decodePolicyHeader(encodePolicyHeader({ depth: 1 }, { secret: "b" }), { secret: ["a", "b"] })).toEqual({ depth: 1 });
    expect(() => encodePolicyHeader({ depth: 1 }, { secret: [] })).toThrow(TypeError);
    expect(() => decodePolicyHeader(header, { secret: ["a", ""] })).toThrow(TypeError);
    process.env.REIN_POLICY_SECRET = " , ,";
    expect(encodePolicyHeader({ depth: 1 })).not.toContain(".");
  });
});
