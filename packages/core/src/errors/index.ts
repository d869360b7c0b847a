export {
  CancelledError,
  DecisionError,
  MaxIterationsExceededError,
  MaxStepsExceededError,
  ContextProviderError,
  MissingProviderError,
  ToolArgumentsError,
  ContextHeadError,
  ContextStoreError,
} from "./core-errors";
