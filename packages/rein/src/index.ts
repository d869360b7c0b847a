/**
 * rein — the umbrella package: everything from `@rein/core`, `@rein/guard`
 * and `@rein/providers` under one name, with the model provider read from
 * the environment.
 *
 * Importing it installs {@link createProvider} as the default provider
 * factory of every {@link Runtime} constructed without a `provider`, so an
 * agent works with only `ANTHROPIC_API_KEY` (or `OPENAI_API_KEY`, or
 * `OPENAI_BASE_URL` for an OpenAI-compatible server) set. The factory runs
 * lazily, on a runtime's first model request; with nothing set, that request
 * fails with a {@link MissingProviderError} (a {@link ProviderConfigError})
 * saying what to set.
 *
 * @example
 * ```ts
 * import { Agent } from "rein";
 *
 * class Greeter extends Agent {
 *   static instructions = "Answer in one short sentence.";
 * }
 * console.log(await new Greeter().ask("Say hello."));
 * ```
 * @packageDocumentation
 */
import { setDefaultProviderFactory } from "@rein/core";
import { createProvider } from "@rein/providers";

// The lists below are explicit so the umbrella's surface is reviewed, not
// inherited by accident; index.test.ts checks none of the packages' runtime
// exports is missing.

// @rein/core
export {
  Agent,
  ChatAgent,
  RunStream,
  RUN_STREAM_BUFFER,
  agent,
  method,
  Context,
  DELETE,
  Runtime,
  setDefaultProviderFactory,
  tool,
  addPreInvocationHook,
  removePreInvocationHook,
  currentSignal,
  CancelledError,
  ToolTimeoutError,
  DecisionError,
  OutputValidationError,
  SessionMismatchError,
  MaxIterationsExceededError,
  MaxStepsExceededError,
  ContextProviderError,
  MissingProviderError,
  ToolArgumentsError,
  ToolApprovalError,
  ContextHeadError,
  ContextStoreError,
  textBlock,
  textOf,
  ProviderError,
  AuthenticationError,
  RateLimitError,
  OverloadedError,
  ContextOverflowError,
  ProviderTimeoutError,
  ScriptedProvider,
  SessionStore,
  InMemorySessionStore,
  SessionNodeWriter,
  SessionGraph,
  selectHistory,
  installShutdownFlush,
  sessionStoreKit,
  SESSION_COMMIT_FAILED_CHANNEL,
  SessionStoreError,
  SessionStoreCorruptError,
  ForeignDatabaseError,
  SessionSchemaVersionError,
  SessionNotFoundError,
  SessionExistsError,
  SessionNodeNotFoundError,
  SessionStoreClosedError,
  SessionStoreBusyError,
  SessionStoreReadOnlyError,
  SessionStoreDirectoryError,
  SessionStoreDiskFullError,
  SessionNodeConflictError,
} from "@rein/core";
export type {
  AgentOptions,
  AgentClassDefaults,
  AskOptions,
  AgentSpec,
  AgentToolEntry,
  ChoiceOptions,
  Effort,
  AgentFunctionOptions,
  MethodOptions,
  Expose,
  ToolApprover,
  ContextOptions,
  ContextProvider,
  ContextHistoryFilter,
  ForSessionOptions,
  RuntimeOptions,
  ExecRequest,
  ExecResult,
  RuntimeEvent,
  RuntimeEventListener,
  RunEvent,
  InferOutput,
  TurnRequest,
  TurnOptions,
  TurnResult,
  TurnStatus,
  TurnContinuation,
  ResumeTurnOptions,
  RunEventBody,
  RunEventSource,
  RunEventListener,
  RunResult,
  RunUsage,
  RunStatus,
  Pricing,
  ModelPrice,
  Tool,
  ToolDefinition,
  ToolExecuteOptions,
  ParametersSchema,
  StandardSchemaLike,
  PreInvocationHook,
  InvocationInfo,
  TextBlock,
  ImageBlock,
  ToolUseBlock,
  ToolResultBlock,
  ContentBlock,
  Message,
  JsonSchema,
  ToolSpec,
  ToolChoice,
  ModelRequest,
  Usage,
  StopReason,
  ModelResponse,
  ModelStreamEvent,
  ModelCallOptions,
  ModelProvider,
  ProviderErrorDetails,
  ScriptedTurn,
  ScriptedProviderOptions,
  SessionNode,
  SessionNodeRole,
  SessionNodeStatus,
  SessionStoreLike,
  SessionInfo,
  SessionCreateOptions,
  SessionBranch,
  SessionGraphFormat,
  ExportGraphOptions,
  SessionNodeUpdate,
  SessionWriteOperation,
  SessionStoreOptions,
  SessionNodeInput,
  SessionNodeWriterOptions,
  SessionWriteBatching,
  SessionCommitFailure,
  HistoryFilter,
  RenderRange,
  SelectHistoryOptions,
} from "@rein/core";

// @rein/guard (the error families UsageError, ModelBehaviorError and SystemFailureError are re-exported by @rein/core too; same objects)
export {
  ReinError,
  UsageError,
  ModelBehaviorError,
  SystemFailureError,
  GuardError,
  RecursionError,
  MAX_AGENTIC_RECURSION_DEPTH,
  CycleError,
  ChainDepthError,
  currentChain,
  depthOf,
  deniedTools,
  currentFrameData,
  withFrameData,
  runInFrame,
  DEFAULT_MAX_CYCLE_REPEATS,
  DEFAULT_MAX_CHAIN_DEPTH,
  situationalPrefix,
  DEFAULT_LOOP_DETECTION_CONFIG,
  resolveLoopDetectionConfig,
  hashToolCall,
  hashOutcome,
  ToolLoopDetector,
  PostCompactionGuard,
  ToolLoopError,
  PostCompactionLoopPersistedError,
  UnknownToolError,
} from "@rein/guard";
export type {
  ReinErrorOptions,
  ChainLimits,
  RunInFrameOptions,
  Frame,
  FrameKind,
  SituationalExtras,
  LoopDetectionConfig,
  LoopDetectionOptions,
  LoopDetectionToolOverride,
  LoopDetectorSwitches,
  PostCompactionGuardConfig,
  HashOutcomeOptions,
  ToolOutcome,
  DetectOptions,
  LoopDetectorStats,
  ToolCallInput,
  ToolOutcomeInput,
  LoopDetection,
  LoopDetectionResult,
  LoopDetectorKind,
  LoopLevel,
  ToolCallRecord,
  PostCompactionCall,
  PostCompactionGuardOptions,
  PostCompactionObservation,
  ToolLoopErrorOptions,
} from "@rein/guard";

// @rein/providers (`ProviderConfigError` is defined in @rein/core; @rein/providers re-exports the same class)
export {
  AnthropicProvider,
  OpenAIProvider,
  createProvider,
  defaultAnthropicModel,
  defaultOpenAIModel,
  ProviderConfigError,
} from "@rein/providers";
export type { AnthropicProviderSettings, OpenAIApi, OpenAIProviderSettings, ProviderEnvironment } from "@rein/providers";

// Runtimes built without a provider read it from the environment, on first use.
setDefaultProviderFactory(() => createProvider());
