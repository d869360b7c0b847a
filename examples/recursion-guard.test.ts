import { RecursionError } from "@rein/guard";
import { runRecursionGuardDemo } from "./recursion-guard";

describe("examples/recursion-guard", () => {
  it("stops the runaway function at depth 5 and shows the chain and the prefix", () => {
    const lines: string[] = [];
    const { bodies, error } = runRecursionGuardDemo((line) => lines.push(line));
    expect(bodies).toBe(5);
    expect(error).toBeInstanceOf(RecursionError);
    const output = lines.join("\n");
    expect(output).toContain("depth 5: wiki_agent → wiki_agent → wiki_agent → wiki_agent → wiki_agent");
    expect(output).toContain("do NOT call it");
    expect(output).toContain("agentic function wiki_agent exceeded max nesting depth 5 — possible runaway recursion");
    expect(output).not.toContain("depth 6");
  });
});
