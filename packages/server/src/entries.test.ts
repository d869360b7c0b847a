import { createServer } from "./create-server";
import { checkEntries, isAgentClass } from "./entries";

/**
 * A module's classes built on another copy of `rein` than the server's —
 * what `rein serve` on a `.ts` module in this monorepo gives (the module's
 * `rein` is the sources, the built server's is dist), and two installed
 * versions of @rein/core give a user.
 */
function secondCopyOfRein(): typeof import("rein") {
  let copy: typeof import("rein") | undefined;
  jest.isolateModules(() => {
    copy = require("rein") as typeof import("rein");
  });
  return copy!;
}

describe("entries whose Agent classes come from another copy of rein", () => {
  const other = secondCopyOfRein();
  class Planner extends other.Agent {
    static runtime = new other.Runtime({ provider: new other.ScriptedProvider(["a plan"], { whenExhausted: "repeat-last" }) });
    async plan(task: string): Promise<string> {
      return this.ask(`Plan: ${task}`);
    }
  }

  it("are classes to the server (constructed with new, not called as factories)", () => {
    expect(isAgentClass(Planner)).toBe(true);
    expect(isAgentClass(() => new Planner())).toBe(false);
  });

  it("are checked for their method at construction", () => {
    expect(() => checkEntries({ plan: [Planner, "nope"] })).toThrow("entries.plan: Planner has no method 'nope'");
  });

  it("run: POST { entry } answers completed with the result (it was 'Class constructor Planner cannot be invoked without new')", async () => {
    const app = createServer({ entries: { plan: [Planner, "plan"] }, mintRootBudget: true });
    const response = await app.request("/v1/agent/run", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ entry: "plan", task: "recursion" }),
    });
    const body = (await response.json()) as { status: string; result: unknown; error?: unknown };
    expect(body).toMatchObject({ status: "completed", result: "a plan" });
    expect(response.status).toBe(200);
  });
});
