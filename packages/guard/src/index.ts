/**
 * @rein/guard — the guard layer every Rein call runs inside: the call chain,
 * the recursion ceiling, cycle detection, the situational prefix, tool-loop
 * detection, reach policy, the arithmetic of per-key spend caps, and the
 * check of a model's tool arguments against their JSON Schema.
 * @packageDocumentation
 */
export * from "./errors";
export * from "./chain";
export * from "./prompt";
export {
  DEFAULT_LOOP_DETECTION_CONFIG,
  resolveLoopDetectionConfig,
  hashToolCall,
  hashOutcome,
  ToolLoopDetector,
  PostCompactionGuard,
  ToolLoopError,
  PostCompactionLoopPersistedError,
  UnknownToolError,
} from "./loops";
export type {
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
} from "./loops";
export * from "./reach";
export * from "./spend";
export * from "./arguments";
