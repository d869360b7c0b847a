export {
  CancelledError,
  DecisionError,
  MaxIterationsExceededError,
  MaxStepsExceededError,
  ContextProviderError,
  MissingProviderError,
  ToolArgumentsError,
  ContextHeadError,
} from "./core-errors";
