export { textBlock, textOf } from "./content";
export type { TextBlock, ImageBlock, ToolUseBlock, ToolResultBlock, ContentBlock, Message } from "./content";
export type {
  JsonSchema,
  ResponseFormat,
  ToolSpec,
  ToolChoice,
  ModelRequest,
  Usage,
  StopReason,
  ModelResponse,
  ModelStreamEvent,
  ModelCallOptions,
  ModelRetry,
  ModelProvider,
} from "./model-provider";
export {
  ProviderError,
  AuthenticationError,
  RateLimitError,
  OverloadedError,
  ContextOverflowError,
  ProviderTimeoutError,
} from "@rein/guard";
export type { ProviderErrorDetails } from "@rein/guard";
export { ScriptedProvider } from "./scripted-provider";
export type { ScriptedTurn } from "./scripted-provider";
export type { ScriptedProviderOptions } from "./scripted-provider-options";
