export type { ReachBudget, ReachPolicyOptions } from "./reach-budget";
export { ReachPolicy } from "./reach-policy";
export type { ReachLimits } from "./reach-policy";
