export { ReinError, UsageError, ModelBehaviorError, SystemFailureError, GuardError } from "./rein-error";
export type { ReinErrorOptions } from "./rein-error";
export { RecursionError, MAX_AGENTIC_RECURSION_DEPTH } from "./recursion-error";
export { CycleError, ChainDepthError } from "./cycle-error";
export { describeError, errorMessage } from "./describe-error";
export { ToolTimeoutError } from "./tool-timeout-error";
export { ProviderError, AuthenticationError, RateLimitError, OverloadedError, ContextOverflowError, ProviderTimeoutError } from "./provider-errors";
export type { ProviderErrorDetails } from "./provider-errors";
export {
  CancelledError,
  InterruptedError,
  DecisionError,
  OutputValidationError,
  SessionMismatchError,
  MaxIterationsExceededError,
  MaxStepsExceededError,
  ContextProviderError,
  ProviderConfigError,
  MissingProviderError,
  ToolArgumentsError,
  ToolApprovalError,
  ContextHeadError,
  ContextStoreError,
} from "./run-errors";
export { ContinuationConsumedError } from "./continuation-consumed-error";
export { McpToolError } from "./mcp-tool-error";
