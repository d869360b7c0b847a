import { createHmac } from "node:crypto";
import type { ReachBudget } from "./reach-budget";
import { ReachPolicy } from "./reach-policy";
import { PolicyHeaderError, type PolicyHeaderErrorReason } from "./reach-errors";
import { MAX_POLICY_HEADER_LENGTH, decodePolicyHeader, encodePolicyHeader } from "./policy-header";
import { passOnBudget, clampBudget } from "./clamp-budget";

const SECRET = "s3cret-for-tests-only-0123456789";
const FULL: ReachBudget = { depth: 3, memoryMb: 512.5, zones: ["local", "docker-network"], tokens: 20_000, costUsd: 0.75, deadline: 1_800_000_000_000 };

const base64url = (text: string): string => Buffer.from(text, "utf8").toString("base64url");
const payloadOf = (header: string): unknown => JSON.parse(Buffer.from(header.split(".")[0]!, "base64url").toString("utf8"));
const hmac = (secret: string, payload: string): string => createHmac("sha256", secret).update(payload).digest("base64url");

/** The reason of the PolicyHeaderError `fn` throws (fails the test for anything else). */
function refusal(fn: () => unknown): PolicyHeaderErrorReason {
  try {
    fn();
  } catch (error) {
    if (PolicyHeaderError.isInstance(error)) return error.reason;
    throw error;
  }
  throw new Error("expected a PolicyHeaderError, got a budget");
}

/** Replaces the character at `index` with another base64url character. */
function flip(text: string, index: number): string {
  const replacement = text[index] === "A" ? "B" : "A";
  return text.slice(0, index) + replacement + text.slice(index + 1);
}

let savedSecret: string | undefined;
beforeEach(() => {
  savedSecret = process.env.REIN_POLICY_SECRET;
  delete process.env.REIN_POLICY_SECRET;
});
afterEach(() => {
  if (savedSecret === undefined) delete process.env.REIN_POLICY_SECRET;
  else process.env.REIN_POLICY_SECRET = savedSecret;
});

describe("encodePolicyHeader / decodePolicyHeader", () => {
  it("round-trips an unsigned header: base64url JSON { d, m, z, t, c, e } in that order, no '.'", () => {
    const header = encodePolicyHeader(FULL);
    expect(header).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(JSON.stringify(payloadOf(header))).toBe('{"d":3,"m":512.5,"z":["local","docker-network"],"t":20000,"c":0.75,"e":1800000000000}');
    expect(decodePolicyHeader(header)).toEqual(FULL);
  });

  it("round-trips a signed header: payload '.' base64url(HMAC-SHA256(secret, payload))", () => {
    const header = encodePolicyHeader(FULL, { secret: SECRET });
    const [payload, signature] = header.split(".");
    expect(signature).toBe(hmac(SECRET, payload!));
    expect(signature).toHaveLength(43);
    expect(decodePolicyHeader(header, { secret: SECRET })).toEqual(FULL);
  });

  it.each<[string, ReachBudget, Record<string, unknown>]>([
    ["depth", { depth: 0 }, { d: 0 }],
    ["memoryMb", { depth: 1, memoryMb: 0.25 }, { d: 1, m: 0.25 }],
    ["zones", { depth: 1, zones: ["local"] }, { d: 1, z: ["local"] }],
    ["zones (empty: no zone allowed)", { depth: 1, zones: [] }, { d: 1, z: [] }],
    ["tokens", { depth: 1, tokens: 0 }, { d: 1, t: 0 }],
    ["costUsd", { depth: 1, costUsd: 0.1 + 0.2 }, { d: 1, c: 0.1 + 0.2 }],
    ["deadline", { depth: 1, deadline: 1_700_000_000_123.5 }, { d: 1, e: 1_700_000_000_123.5 }],
  ])("carries %s alone, other fields left out", (_, budget, wire) => {
    const header = encodePolicyHeader(budget);
    expect(payloadOf(header)).toEqual(wire);
    expect(decodePolicyHeader(header)).toEqual(budget);
  });

  it("leaves out a field without a limit (Infinity or undefined); a header without 'd' decodes as depth Infinity", () => {
    const header = encodePolicyHeader({ depth: Infinity, memoryMb: undefined, tokens: Infinity, costUsd: Infinity, deadline: Infinity });
    expect(payloadOf(header)).toEqual({});
    expect(decodePolicyHeader(header)).toEqual({ depth: Infinity });
    expect(decodePolicyHeader(base64url("{}"))).toEqual({ depth: Infinity });
  });

  it("returns a frozen budget (zones too) and writes -0 as 0", () => {
    const budget = decodePolicyHeader(encodePolicyHeader({ depth: -0, zones: ["local"] }));
    expect(Object.is(budget.depth, 0)).toBe(true);
    expect(Object.isFrozen(budget)).toBe(true);
    expect(Object.isFrozen(budget.zones)).toBe(true);
  });

  it.each<[string, unknown, RegExp]>([
    ["a budget that is not an object", null, /the budget must be an object/],
    ["depth missing", {}, /'depth' must be a non-negative integer/],
    ["negative depth", { depth: -1 }, /'depth' must be a non-negative integer .*got -1/],
    ["fractional depth", { depth: 1.5 }, /'depth' must be a non-negative integer/],
    ["NaN depth", { depth: NaN }, /'depth' .*got NaN/],
    ["depth beyond a safe integer", { depth: 2 ** 53 }, /'depth'/],
    ["depth as a string", { depth: "3" }, /'depth' .*got a value of type string/],
    ["negative memoryMb", { depth: 1, memoryMb: -1 }, /'memoryMb' must be a non-negative number/],
    ["fractional tokens", { depth: 1, tokens: 1.5 }, /'tokens' must be a non-negative integer/],
    ["NaN costUsd", { depth: 1, costUsd: NaN }, /'costUsd'/],
    ["deadline after the year 275760", { depth: 1, deadline: 9e15 }, /'deadline'/],
    ["zones not an array", { depth: 1, zones: "local" }, /'zones' must be an array of non-empty zone names/],
    ["an empty zone name", { depth: 1, zones: [""] }, /'zones'/],
    ["an unknown field", { depth: 1, extra: 1 }, /unknown budget field 'extra'/],
  ])("refuses to encode %s with a TypeError naming the field", (_, budget, message) => {
    expect(() => encodePolicyHeader(budget as ReachBudget)).toThrow(TypeError);
    expect(() => encodePolicyHeader(budget as ReachBudget)).toThrow(message);
  });

  it("refuses an empty or non-string secret and unknown options with a TypeError", () => {
    expect(() => encodePolicyHeader({ depth: 1 }, { secret: "" })).toThrow(/option 'secret' must be a non-empty string/);
    expect(() => encodePolicyHeader({ depth: 1 }, { secret: 42 as unknown as string })).toThrow(TypeError);
    expect(() => encodePolicyHeader({ depth: 1 }, { sekret: "x" } as never)).toThrow(/unknown option 'sekret'/);
    expect(() => decodePolicyHeader("e30", { secret: "" })).toThrow(TypeError);
    expect(() => decodePolicyHeader("e30", { requireSignature: "yes" } as never)).toThrow(/'requireSignature' must be a boolean/);
  });

  it("never produces a header longer than the decoder accepts", () => {
    const zones = Array.from({ length: 400 }, (_, i) => `zone-${i}`);
    expect(() => encodePolicyHeader({ depth: 1, zones })).toThrow(/more than the 4096 a callee accepts/);
  });
});

describe("secret: REIN_POLICY_SECRET and the option", () => {
  it("signs with REIN_POLICY_SECRET by default and requires a valid signature with it", () => {
    process.env.REIN_POLICY_SECRET = SECRET;
    const header = encodePolicyHeader(FULL);
    expect(header.split(".")[1]).toBe(hmac(SECRET, header.split(".")[0]!));
    expect(decodePolicyHeader(header)).toEqual(FULL);
    expect(refusal(() => decodePolicyHeader(header.split(".")[0]))).toBe("unsigned");
  });

  it("lets an explicit secret win over REIN_POLICY_SECRET; secret: undefined falls back to it", () => {
    process.env.REIN_POLICY_SECRET = "from-the-environment";
    const header = encodePolicyHeader(FULL, { secret: SECRET });
    expect(header.split(".")[1]).toBe(hmac(SECRET, header.split(".")[0]!));
    expect(refusal(() => decodePolicyHeader(header))).toBe("bad-signature");
    expect(decodePolicyHeader(header, { secret: SECRET })).toEqual(FULL);
    const fromEnvironment = encodePolicyHeader(FULL, { secret: undefined });
    expect(fromEnvironment.split(".")[1]).toBe(hmac("from-the-environment", fromEnvironment.split(".")[0]!));
  });

  it("treats a blank REIN_POLICY_SECRET as unset", () => {
    process.env.REIN_POLICY_SECRET = "";
    const header = encodePolicyHeader(FULL);
    expect(header).not.toContain(".");
    expect(decodePolicyHeader(header)).toEqual(FULL);
  });

  it("refuses an unsigned header when a secret is set by option", () => {
    expect(refusal(() => decodePolicyHeader(encodePolicyHeader(FULL), { secret: SECRET }))).toBe("unsigned");
  });

  it("requireSignature: false with a secret accepts unsigned headers but still verifies signed ones", () => {
    expect(decodePolicyHeader(encodePolicyHeader(FULL), { secret: SECRET, requireSignature: false })).toEqual(FULL);
    const forged = encodePolicyHeader(FULL, { secret: "another" });
    expect(refusal(() => decodePolicyHeader(forged, { secret: SECRET, requireSignature: false }))).toBe("bad-signature");
  });

  it("requireSignature: true without any secret is a TypeError (nothing could be verified)", () => {
    expect(() => decodePolicyHeader(encodePolicyHeader(FULL), { requireSignature: true })).toThrow(/requireSignature needs a secret/);
  });

  it("without a secret ignores a well-formed signature (callers may sign before the callee has the secret)", () => {
    const signed = encodePolicyHeader(FULL, { secret: SECRET });
    expect(decodePolicyHeader(signed)).toEqual(FULL);
    expect(decodePolicyHeader(`${signed.split(".")[0]}.${hmac("anything", "x")}`)).toEqual(FULL);
    expect(refusal(() => decodePolicyHeader(`${signed.split(".")[0]}.not+base64url`))).toBe("malformed");
  });
});

describe("decodePolicyHeader refusals", () => {
  it.each([undefined, null, ""])("refuses %p as missing", (value) => {
    expect(refusal(() => decodePolicyHeader(value))).toBe("missing");
    expect(refusal(() => decodePolicyHeader(value, { secret: SECRET }))).toBe("missing");
  });

  const valid = base64url('{"d":2}');
  it.each<[string, unknown]>([
    ["a number", 42],
    ["an array of header values", [valid, valid]],
    ["an object", { d: 2 }],
    ["a String object", new String(valid)],
    ["whitespace", "   "],
    ["padding", Buffer.from('{"d":2}').toString("base64")],
    ["base64 '+' and '/'", "e+/9"],
    ["two dots", `${valid}.${valid}.${valid}`],
    ["an empty payload", `.${hmac(SECRET, "")}`],
    ["an empty signature", `${valid}.`],
    ["non-canonical base64url (stray bits)", "e30B"],
    ["an impossible base64url length", "e30AA"],
    ["not UTF-8", Buffer.from([0xff, 0xfe, 0x7b, 0x7d]).toString("base64url")],
    ["a byte-order mark before the JSON", base64url("\uFEFF{}")],
    ["not JSON", base64url("{d:2}")],
    ["a JSON array", base64url("[2]")],
    ["JSON null", base64url("null")],
    ["a JSON string", base64url('"d"')],
    ["an unknown field", base64url('{"d":2,"x":1}')],
    ["a __proto__ field", base64url('{"d":2,"__proto__":{"t":1}}')],
    ["a negative depth", base64url('{"d":-1}')],
    ["a fractional depth", base64url('{"d":1.5}')],
    ["depth as a string", base64url('{"d":"2"}')],
    ["depth as a boolean", base64url('{"d":true}')],
    ["depth null", base64url('{"d":null}')],
    ["a depth too large", base64url('{"d":9007199254740992}')],
    ["a number that overflows to Infinity", base64url('{"d":1,"t":1e999}')],
    ["negative memory", base64url('{"d":1,"m":-0.5}')],
    ["memory too large", base64url('{"d":1,"m":1e300}')],
    ["fractional tokens", base64url('{"d":1,"t":0.5}')],
    ["cost as a string", base64url('{"d":1,"c":"0.1"}')],
    ["a deadline after the year 275760", base64url('{"d":1,"e":8640000000000001}')],
    ["zones not an array", base64url('{"d":1,"z":"local"}')],
    ["an empty zone name", base64url('{"d":1,"z":[""]}')],
    ["a zone that is not a string", base64url('{"d":1,"z":[1]}')],
    ["an absurd length", "A".repeat(MAX_POLICY_HEADER_LENGTH + 1)],
  ])("refuses %s as malformed", (_, value) => {
    expect(refusal(() => decodePolicyHeader(value))).toBe("malformed");
  });

  it("accepts a header of exactly the maximum length", () => {
    // 16 bytes of JSON around the zone name; 3072 bytes are 4096 base64url characters.
    const header = base64url(`{"d":1,"z":["${"a".repeat(3072 - 16)}"]}`);
    expect(header).toHaveLength(MAX_POLICY_HEADER_LENGTH);
    expect(decodePolicyHeader(header).depth).toBe(1);
  });

  it("refuses a header with any one character of its payload changed as bad-signature", () => {
    const header = encodePolicyHeader(FULL, { secret: SECRET });
    const payload = header.split(".")[0]!;
    for (let index = 0; index < payload.length; index++) {
      expect(refusal(() => decodePolicyHeader(flip(payload, index) + header.slice(payload.length), { secret: SECRET }))).toBe("bad-signature");
    }
  });

  it("refuses a header with any one character of its signature changed as bad-signature", () => {
    const header = encodePolicyHeader(FULL, { secret: SECRET });
    const at = header.indexOf(".") + 1;
    for (let index = at; index < header.length; index++) {
      expect(refusal(() => decodePolicyHeader(flip(header, index), { secret: SECRET }))).toBe("bad-signature");
    }
    expect(refusal(() => decodePolicyHeader(header.slice(0, -1), { secret: SECRET }))).toBe("bad-signature");
    expect(refusal(() => decodePolicyHeader(`${header}AA`, { secret: SECRET }))).toBe("bad-signature");
  });

  describe("inflation: a callee never gets more than its caller signed", () => {
    const signed = (): string => encodePolicyHeader({ depth: 1, tokens: 1000 }, { secret: SECRET });
    const inflated = { depth: 50, tokens: 1_000_000 };

    it("refuses a larger budget re-encoded without the secret (unsigned)", () => {
      expect(decodePolicyHeader(signed(), { secret: SECRET })).toEqual({ depth: 1, tokens: 1000 });
      expect(refusal(() => decodePolicyHeader(encodePolicyHeader(inflated), { secret: SECRET }))).toBe("unsigned");
    });

    it("refuses a larger budget signed with a wrong secret", () => {
      expect(refusal(() => decodePolicyHeader(encodePolicyHeader(inflated, { secret: "guessed" }), { secret: SECRET }))).toBe("bad-signature");
    });

    it("refuses a larger budget carrying the original signature", () => {
      const signature = signed().split(".")[1]!;
      const forged = `${encodePolicyHeader(inflated)}.${signature}`;
      expect(refusal(() => decodePolicyHeader(forged, { secret: SECRET }))).toBe("bad-signature");
    });

    it("refuses a payload whose JSON was edited in place (d: 1 → d: 9)", () => {
      const [payload, signature] = signed().split(".") as [string, string];
      const edited = base64url(Buffer.from(payload, "base64url").toString("utf8").replace('"d":1', '"d":9'));
      expect(refusal(() => decodePolicyHeader(`${edited}.${signature}`, { secret: SECRET }))).toBe("bad-signature");
    });
  });

  it("never puts the secret, the signature or the payload in a message", () => {
    const header = encodePolicyHeader({ depth: 1, zones: ["private-zone-name"] }, { secret: SECRET });
    const [payload, signature] = header.split(".") as [string, string];
    const messages: string[] = [];
    for (const [value, secret] of [
      [`${flip(payload, 3)}.${signature}`, SECRET],
      [payload, SECRET],
      [`${payload}.${signature}.x`, SECRET],
      [header, "another-secret-value"],
    ] as const) {
      try {
        decodePolicyHeader(value, { secret });
      } catch (error) {
        messages.push((error as Error).message);
      }
    }
    expect(messages).toHaveLength(4);
    for (const message of messages) {
      for (const leak of [SECRET, "another-secret-value", signature, payload, "private-zone-name"]) expect(message).not.toContain(leak);
    }
  });
});

describe("passOnBudget", () => {
  it("passes the remaining budget on as it is: depth is not decremented, d: 0 included", () => {
    expect(passOnBudget(FULL)).toEqual(FULL);
    expect(passOnBudget({ depth: 0 })).toEqual({ depth: 0 });
    expect(decodePolicyHeader(encodePolicyHeader(passOnBudget({ depth: 0 })))).toEqual({ depth: 0 });
  });

  it("returns a frozen normalized copy (no-limit fields left out) and leaves its argument alone", () => {
    const remaining = { depth: 2, tokens: Infinity, zones: ["local"] };
    const child = passOnBudget(remaining);
    expect(child).toEqual({ depth: 2, zones: ["local"] });
    expect(Object.isFrozen(child)).toBe(true);
    expect(child.zones).not.toBe(remaining.zones);
    expect(remaining).toEqual({ depth: 2, tokens: Infinity, zones: ["local"] });
  });

  it("refuses a bad budget with a TypeError naming the field", () => {
    expect(() => passOnBudget({ depth: -1 })).toThrow(/passOnBudget: budget field 'depth'/);
  });
});

describe("clampBudget", () => {
  const now = 1_700_000_000_000;

  it("takes the smaller of every number, the zones both allow and the earlier deadline", () => {
    const received: ReachBudget = { depth: 4, memoryMb: 100, zones: ["docker-network", "local", "cloud"], tokens: 500, costUsd: 2, deadline: now + 60_000 };
    const local = { maxLogicDepth: 3, maxMemoryMb: 1024, allowedZones: ["local", "docker-network"], maxTokens: 10_000, maxCostUsd: 1, timeoutMs: 30_000 };
    expect(clampBudget(received, local, now)).toEqual({ depth: 3, memoryMb: 100, zones: ["docker-network", "local"], tokens: 500, costUsd: 1, deadline: now + 30_000 });
  });

  it("keeps the received value when it is the tighter one, and the received deadline when earlier", () => {
    expect(clampBudget({ depth: 1, deadline: now + 5 }, { maxLogicDepth: 5, timeoutMs: 1000 }, now)).toEqual({ depth: 1, deadline: now + 5 });
  });

  it("uses the side that sets a limit when only one does; leaves out what neither limits", () => {
    expect(clampBudget({ depth: Infinity }, { maxLogicDepth: Infinity }, now)).toEqual({ depth: Infinity });
    expect(clampBudget({ depth: Infinity, tokens: 7 }, { maxLogicDepth: 2, maxCostUsd: 3, allowedZones: ["local"] }, now)).toEqual({
      depth: 2,
      zones: ["local"],
      tokens: 7,
      costUsd: 3,
    });
    expect(clampBudget({ depth: 2, zones: ["cloud"] }, { maxLogicDepth: 2 }, now)).toEqual({ depth: 2, zones: ["cloud"] });
  });

  it("gives no zone when the sides share none", () => {
    expect(clampBudget({ depth: 2, zones: ["cloud"] }, { maxLogicDepth: 2, allowedZones: ["local"] }, now).zones).toEqual([]);
  });

  it("accepts a ReachPolicy's limits (Infinity for no limit) and treats limits no header can carry as none", () => {
    const limits = new ReachPolicy({ maxLogicDepth: 3 }).limits;
    const clamped = clampBudget({ depth: 9, tokens: 100 }, limits, now);
    expect(clamped).toEqual({ depth: 3, memoryMb: 1024, zones: ["local", "docker-network"], tokens: 100 });
    expect(() => encodePolicyHeader(clamped)).not.toThrow();
    expect(clampBudget({ depth: 1 }, { maxLogicDepth: 1, maxMemoryMb: 1e300, timeoutMs: 1e300 }, now)).toEqual({ depth: 1 });
  });

  it("defaults now to Date.now()", () => {
    const before = Date.now();
    const { deadline } = clampBudget({ depth: 1 }, { maxLogicDepth: 1, timeoutMs: 1000 });
    expect(deadline).toBeGreaterThanOrEqual(before + 1000);
    expect(deadline).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it.each<[string, unknown, RegExp]>([
    ["local not an object", null, /local limits must be an object/],
    ["maxLogicDepth missing", {}, /'maxLogicDepth' must be a non-negative integer/],
    ["a negative maxTokens", { maxLogicDepth: 1, maxTokens: -1 }, /'maxTokens'/],
    ["a NaN timeoutMs", { maxLogicDepth: 1, timeoutMs: NaN }, /'timeoutMs'/],
    ["allowedZones not an array", { maxLogicDepth: 1, allowedZones: "local" }, /'allowedZones'/],
  ])("refuses %s with a TypeError naming the limit", (_, local, message) => {
    expect(() => clampBudget({ depth: 1 }, local as never, now)).toThrow(message);
  });

  it("refuses a bad received budget or now with a TypeError", () => {
    expect(() => clampBudget({ depth: NaN }, { maxLogicDepth: 1 }, now)).toThrow(/clampBudget: budget field 'depth'/);
    expect(() => clampBudget({ depth: 1 }, { maxLogicDepth: 1 }, NaN)).toThrow(/'now' must be a finite number/);
  });
});
