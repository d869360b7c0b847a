export { ReinError, UsageError, ModelBehaviorError, SystemFailureError, GuardError } from "./rein-error";
export type { ReinErrorOptions } from "./rein-error";
export { RecursionError, MAX_AGENTIC_RECURSION_DEPTH } from "./recursion-error";
export { CycleError, ChainDepthError } from "./cycle-error";
export { describeError, errorMessage } from "./describe-error";
export { ToolTimeoutError } from "./tool-timeout-error";
export { ProviderError, AuthenticationError, RateLimitError, OverloadedError, ContextOverflowError, ProviderTimeoutError } from "./provider-errors";
export type { ProviderErrorDetails } from "./provider-errors";
