import { budgetFromJob, budgetToJob } from "./job-budget";

describe("a budget on the queue (JSON)", () => {
  it("keeps finite figures and zones, and an unlimited figure survives JSON as null and comes back unlimited", () => {
    const budget = { depth: Infinity, tokens: 1200, costUsd: 0.5, zones: ["local"], deadline: 1_900_000_000_000 };
    const json = JSON.parse(JSON.stringify(budgetToJob(budget))) as ReturnType<typeof budgetToJob>;
    expect(json).toEqual({ depth: null, tokens: 1200, costUsd: 0.5, zones: ["local"], deadline: 1_900_000_000_000 });
    expect(budgetFromJob(json)).toEqual(budget);
  });

  it("a budget without figures is unlimited in depth", () => {
    expect(budgetFromJob({})).toEqual({ depth: Infinity });
    expect(budgetFromJob(budgetToJob({ depth: 3 }))).toEqual({ depth: 3 });
  });
});
