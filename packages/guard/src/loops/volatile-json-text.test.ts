/**
 * Volatile keys are dropped from a result that arrives as JSON text (every
 * MCP text result, a tool returning JSON.stringify(...)) as from the same
 * result as an object (found by an attack review, 2026-12-03: 25 identical
 * failing calls with a new pid each tripped nothing).
 */
import { ToolLoopDetector } from "./loop-detector";

function drive(result: (i: number) => unknown): string | undefined {
  const detector = new ToolLoopDetector({ enabled: true });
  for (let i = 0; i < 25; i++) {
    const params = { command: "make test" };
    const verdict = detector.detect("exec", params, { runId: "r" });
    if (verdict.stuck && verdict.level === "critical") return verdict.detector;
    detector.recordCall({ toolName: "exec", params, runId: "r", toolCallId: `c${i}` });
    detector.recordOutcome({ toolName: "exec", params, runId: "r", toolCallId: `c${i}`, result: result(i) });
  }
  return undefined;
}

it("volatile keys do not defeat detection when the same result arrives as JSON text (MCP text results, string-returning tools)", () => {
  const failure = (i: number) => ({ exitCode: 1, stderr: "FAIL src/a.test.ts", pid: 4000 + i, durationMs: 100 + i });
  expect(drive(failure)).toBe("generic_repeat"); // object result: detected, as documented
  expect(drive((i) => JSON.stringify(failure(i)))).toBe("generic_repeat"); // the same result as text: never flagged
});
