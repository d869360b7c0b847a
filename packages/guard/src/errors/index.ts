export { ReinError, UsageError, ModelBehaviorError, SystemFailureError, GuardError } from "./rein-error";
export type { ReinErrorOptions } from "./rein-error";
export { RecursionError, MAX_AGENTIC_RECURSION_DEPTH } from "./recursion-error";
export { CycleError, ChainDepthError } from "./cycle-error";
export { describeError, errorMessage } from "./describe-error";
export { ToolTimeoutError } from "./tool-timeout-error";
