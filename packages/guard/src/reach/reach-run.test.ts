import { ReachPolicy } from "./reach-policy";
import { ReachRun } from "./reach-run";

describe("ReachRun.deadlineError", () => {
  it("reports the time used, never less than the limit: a timer at the deadline may fire a millisecond early by Date.now()", () => {
    const run = new ReachRun(new ReachPolicy({ timeoutMs: 500 }), undefined, 1_000);
    const early = run.deadlineError(1_499);
    expect(early).toMatchObject({ dimension: "deadline", used: 500, limit: 500 });
    expect(early.message).not.toContain("499");
    expect(run.deadlineError(1_750)).toMatchObject({ used: 750, limit: 500 });
  });
});
