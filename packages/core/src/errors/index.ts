// The error classes live in @rein/guard beside the rest of the taxonomy; @rein/core re-exports them (the same
// classes), so users of @rein/core (and @rein/providers) import and test for them from here.
export {
  UsageError,
  ModelBehaviorError,
  SystemFailureError,
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
  ToolTimeoutError,
  ContinuationConsumedError,
  McpToolError,
} from "@rein/guard";
