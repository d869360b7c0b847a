import { redactError, redactText, redactValue } from "./redact-secrets";

const key = "sk-live-0123456789";

describe("redactText", () => {
  it("replaces the key itself, any bearer token and any x-api-key / api-key value, whatever the key", () => {
    expect(redactText(`key ${key} and again ${key}`, [key])).toBe("key [redacted] and again [redacted]");
    expect(redactText("Authorization: Bearer other-token.42)", [])).toBe("Authorization: Bearer [redacted])");
    expect(redactText('{"x-api-key": "abc123", "api_key":"def456"}', [])).toBe('{"x-api-key": "[redacted]", "api_key":"[redacted]"}');
    expect(redactText("invalid x-api-key", [key])).toBe("invalid x-api-key");
  });

  it("leaves text alone for secrets too short to be keys (placeholders would blank out words)", () => {
    expect(redactText("no key here", ["key"])).toBe("no key here");
  });
});

describe("redactValue and redactError", () => {
  it("redacts parsed bodies deeply, and errors along their cause chain in place", () => {
    expect(redactValue({ error: { message: `bad ${key}`, list: [key, 1] } }, [key])).toEqual({
      error: { message: "bad [redacted]", list: ["[redacted]", 1] },
    });
    const inner = Object.assign(new Error(`401 ${key}`), { apiMessage: `invalid ${key}`, error: { message: key } });
    const outer = new Error(`failed: ${key}`, { cause: inner });
    expect(redactError(outer, [key])).toBe(outer);
    for (const text of [outer.message, outer.stack, inner.message, inner.stack, inner.apiMessage, JSON.stringify(inner.error)]) {
      expect(text).not.toContain(key);
    }
  });
});
