import { childTraceparent, newTraceparent, parseTraceparent } from "./traceparent";

const TRACE = "12345678901234567890123456789012";
const PARENT = "1234567890123456";
const VALID = `00-${TRACE}-${PARENT}-01`;

describe("parseTraceparent (W3C Trace Context level 1)", () => {
  it("parses the spec's example", () => {
    expect(parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")).toEqual({
      version: "00",
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      parentId: "00f067aa0ba902b7",
      flags: "01",
    });
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-00`)?.flags).toBe("00");
  });

  it.each([" ", "\t", "\t "])("ignores optional whitespace %p around the value", (space) => {
    expect(parseTraceparent(`${space}${VALID}${space}`)?.traceId).toBe(TRACE);
  });

  it.each([
    ["a future version", `cc-${TRACE}-${PARENT}-01`],
    ["a future version with more fields after a '-'", `cc-${TRACE}-${PARENT}-01-what-the-future-will-be-like`],
  ])("accepts %s, read by the version 00 rules", (_, value) => {
    expect(parseTraceparent(value)).toEqual({ version: "cc", traceId: TRACE, parentId: PARENT, flags: "01" });
  });

  it.each([
    ["version 00 with a trailing character", `${VALID}.`],
    ["version 00 with more fields", `${VALID}-what-the-future-will-be-like`],
    ["a future version followed by something other than '-'", `cc-${TRACE}-${PARENT}-01.what-the-future-will-be-like`],
    ["version ff", `ff-${TRACE}-${PARENT}-01`],
    ["an illegal character in the version", `.0-${TRACE}-${PARENT}-01`],
    ["another illegal character in the version", `0.-${TRACE}-${PARENT}-01`],
    ["a version of 3 digits", `000-${TRACE}-${PARENT}-01`],
    ["a version of 4 digits", `0000-${TRACE}-${PARENT}-01`],
    ["a version of 1 digit", `0-${TRACE}-${PARENT}-01`],
    ["an uppercase version", `0A-${TRACE}-${PARENT}-01`],
    ["an all-zero trace id", `00-${"0".repeat(32)}-${PARENT}-01`],
    ["an illegal character in the trace id", `00-.2345678901234567890123456789012-${PARENT}-01`],
    ["an illegal last character in the trace id", `00-1234567890123456789012345678901.-${PARENT}-01`],
    ["an uppercase trace id", `00-${TRACE.replace("1", "A")}-${PARENT}-01`],
    ["a trace id of 33 digits", `00-${TRACE}3-${PARENT}-01`],
    ["a trace id of 31 digits", `00-${TRACE.slice(1)}-${PARENT}-01`],
    ["an all-zero parent id", `00-${TRACE}-${"0".repeat(16)}-01`],
    ["an illegal character in the parent id", `00-${TRACE}-.234567890123456-01`],
    ["an illegal last character in the parent id", `00-${TRACE}-123456789012345.-01`],
    ["a parent id of 17 digits", `00-${TRACE}-${PARENT}7-01`],
    ["a parent id of 15 digits", `00-${TRACE}-${PARENT.slice(1)}-01`],
    ["an illegal character in the flags", `00-${TRACE}-${PARENT}-.0`],
    ["another illegal character in the flags", `00-${TRACE}-${PARENT}-0.`],
    ["uppercase flags", `00-${TRACE}-${PARENT}-0A`],
    ["flags of 3 digits", `00-${TRACE}-${PARENT}-001`],
    ["flags of 1 digit", `00-${TRACE}-${PARENT}-1`],
    ["underscores for dashes", VALID.replaceAll("-", "_")],
    ["the empty string", ""],
    ["whitespace that is not OWS", `\n${VALID}`],
  ])("refuses %s", (_, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });

  it.each([undefined, null, 42, [VALID], { toString: () => VALID }])("refuses the non-string %p without throwing", (value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });
});

describe("newTraceparent", () => {
  it("starts a valid, sampled trace with random ids", () => {
    const first = newTraceparent();
    expect(first).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(parseTraceparent(first)).toBeDefined();
    const second = parseTraceparent(newTraceparent())!;
    expect(second.traceId).not.toBe(parseTraceparent(first)!.traceId);
    expect(second.parentId).not.toBe(parseTraceparent(first)!.parentId);
  });
});

describe("childTraceparent", () => {
  it("keeps the trace id, takes a new parent id and keeps the sampled flag", () => {
    for (const flags of ["01", "00"]) {
      const child = parseTraceparent(childTraceparent(`00-${TRACE}-${PARENT}-${flags}`))!;
      expect(child).toMatchObject({ version: "00", traceId: TRACE, flags });
      expect(child.parentId).not.toBe(PARENT);
    }
  });

  it("answers a future version with version 00, unknown flag bits cleared", () => {
    expect(parseTraceparent(childTraceparent(`cc-${TRACE}-${PARENT}-ff-more`))).toMatchObject({ version: "00", traceId: TRACE, flags: "01" });
    expect(parseTraceparent(childTraceparent(`00-${TRACE}-${PARENT}-fe`))?.flags).toBe("00");
  });

  it.each([undefined, "", "garbage", `ff-${TRACE}-${PARENT}-01`, `00-${"0".repeat(32)}-${PARENT}-01`])("starts a fresh trace when the parent is %p", (parent) => {
    const child = parseTraceparent(childTraceparent(parent))!;
    expect(child).toMatchObject({ version: "00", flags: "01" });
    expect(child.traceId).not.toBe(TRACE);
  });
});
