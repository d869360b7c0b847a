import { safeJson } from "./safe-json";

describe("safeJson", () => {
  it("writes a value shared by two places both times, and only a real cycle as [Circular]", () => {
    const block = { type: "text", text: "Shelve Dune." };
    const input = { content: [block], sent: [{ type: "text", text: "guidance" }, block] };
    expect(JSON.parse(safeJson(input))).toEqual({ content: [block], sent: [{ type: "text", text: "guidance" }, block] });
    const cyclic: Record<string, unknown> = { name: "loop", list: [block, block] };
    cyclic["self"] = cyclic;
    (cyclic["list"] as unknown[]).push(cyclic);
    expect(JSON.parse(safeJson(cyclic))).toEqual({ name: "loop", list: [block, block, "[Circular]"], self: "[Circular]" });
  });

  it("Infinity is null, a bigint its digits, an Error its name and message", () => {
    expect(JSON.parse(safeJson({ limit: Infinity, big: 12n, error: new RangeError("too far") }))).toEqual({ limit: null, big: "12", error: { name: "RangeError", message: "too far" } });
  });
});
