export type { ReachBudget, ReachPolicyOptions } from "./reach-budget";
export { ReachPolicy } from "./reach-policy";
export type { ReachLimits } from "./reach-policy";
export { ReachError, ReachExceededError, MemoryReachExceededError, UntrustedZoneError } from "./reach-limit-errors";
export type { ReachDimension } from "./reach-limit-errors";
export { detectZone, memoryUsageMb, resetMemorySample, MEMORY_SAMPLE_MS } from "./environment";
export { ReachRun } from "./reach-run";
export type { ReachStatus } from "./reach-run";
