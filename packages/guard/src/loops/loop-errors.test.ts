import { GuardError, ModelBehaviorError, ReinError } from "../errors/rein-error";
import { ToolLoopError } from "./tool-loop-error";
import { UnknownToolError } from "./unknown-tool-error";

describe("ToolLoopError", () => {
  it("carries detector, count and tool, and says what to do", () => {
    const cause = new Error("last block");
    const error = new ToolLoopError("generic_repeat", 20, "search", { blockedCalls: 3, cause });
    expect(error).toMatchObject({ name: "ToolLoopError", detector: "generic_repeat", count: 20, toolName: "search", blockedCalls: 3 });
    expect(error.cause).toBe(cause);
    expect(error.message).toMatch(/^CRITICAL: run stopped after 3 blocked calls: search .*generic_repeat, 20 repeated calls/);
    expect(error.message).toContain("different approach");
    expect(ToolLoopError.isInstance(error)).toBe(true);
    expect(ReinError.isInstance(error)).toBe(true);
    expect(ModelBehaviorError.isInstance(error)).toBe(true);
    expect(GuardError.isInstance(error)).toBe(false);
  });
});

describe("UnknownToolError", () => {
  it("says the tool does not exist and lists what exists", () => {
    const error = new UnknownToolError("web_search", ["search", "fetch"]);
    expect(error).toMatchObject({ name: "UnknownToolError", toolName: "web_search", availableTools: ["search", "fetch"] });
    expect(error.message).toBe('Tool "web_search" does not exist. Available tools: search, fetch. Call one of these or answer without a tool.');
    // Model behaviour, but not a guard refusal: a tool throwing it is an ordinary tool failure.
    expect(ModelBehaviorError.isInstance(error)).toBe(true);
    expect(GuardError.isInstance(error)).toBe(false);
  });

  it("says so when no tool exists at all", () => {
    expect(new UnknownToolError("x", []).message).toBe('Tool "x" does not exist. No tools are available. Answer without a tool.');
  });
});
