import { MemoryReachExceededError, ReachExceededError, UntrustedZoneError } from "./reach-limit-errors";
import { ReachPolicy } from "./reach-policy";

describe("ReachPolicy", () => {
  it("fills in the defaults of DESIGN 2.6", () => {
    expect(new ReachPolicy().limits).toMatchObject({
      maxLogicDepth: 5,
      maxMemoryMb: 1024,
      memoryGrowth: 0.15,
      allowedZones: ["local", "docker-network"],
      maxTokens: Infinity,
      maxCostUsd: Infinity,
      timeoutMs: Infinity,
    });
  });

  it("check() throws the error that applies, with its figures; figures within the limits pass", () => {
    const policy = new ReachPolicy({ maxLogicDepth: 3, maxMemoryMb: 100, memoryGrowth: 0.5, maxTokens: 1_000, maxCostUsd: 1, timeoutMs: 5_000, allowedZones: ["local"] });
    expect(() => policy.check({ depth: 3, tokens: 1_000, costUsd: 1, elapsedMs: 5_000, memoryGrowthMb: 250, zone: "local" })).not.toThrow();
    expect(() => policy.check({ depth: 4, zone: "local" })).toThrow(ReachExceededError);
    expect(() => policy.check({ depth: 2, memoryGrowthMb: 201, zone: "local" })).toThrow(MemoryReachExceededError);
    expect(() => policy.check({ tokens: 1_001, zone: "local" })).toThrow(/1001 tokens would pass the budget of 1000/);
    expect(() => policy.check({ costUsd: 1.5, zone: "local" })).toThrow(expect.objectContaining({ dimension: "cost" }));
    expect(() => policy.check({ elapsedMs: 5_001, zone: "local" })).toThrow(expect.objectContaining({ dimension: "deadline" }));
    expect(() => policy.check({ zone: "public" })).toThrow(UntrustedZoneError);
  });

  it("bad options are a TypeError naming the option; update() swaps the limits, a bad update keeps them", () => {
    expect(() => new ReachPolicy({ maxLogicDepth: 0 })).toThrow(/maxLogicDepth.*positive integer/);
    expect(() => new ReachPolicy({ memoryGrowth: -1 })).toThrow(/memoryGrowth/);
    expect(() => new ReachPolicy({ allowedZones: [] })).toThrow(/allowedZones/);
    expect(() => new ReachPolicy({ maxDepth: 3 } as never)).toThrow(/unknown option 'maxDepth'/);
    const policy = new ReachPolicy({ maxLogicDepth: 4 });
    const before = policy.limits;
    policy.update({ maxLogicDepth: 2 });
    expect(policy.limits.maxLogicDepth).toBe(2);
    expect(before.maxLogicDepth).toBe(4);
    expect(() => policy.update({ maxTokens: -5 })).toThrow(TypeError);
    expect(policy.limits.maxLogicDepth).toBe(2);
  });
});
