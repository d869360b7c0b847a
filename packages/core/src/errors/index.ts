// The three error families, from @rein/guard, so users of @rein/core (and @rein/providers) can test for them.
export { UsageError, ModelBehaviorError, SystemFailureError } from "@rein/guard";
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
} from "./core-errors";
export { ToolTimeoutError } from "@rein/guard";
export { ContinuationConsumedError } from "./continuation-consumed-error";
export { McpToolError } from "./mcp-tool-error";
