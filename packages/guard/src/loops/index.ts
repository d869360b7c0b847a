export {
  DEFAULT_LOOP_DETECTION_CONFIG,
  resolveLoopDetectionConfig,
} from "./loop-detection-config";
export type { LoopDetectionConfig } from "./loop-detection-config";
export type {
  LoopDetectionOptions,
  LoopDetectionToolOverride,
  LoopDetectorSwitches,
  PostCompactionGuardConfig,
} from "./loop-detection-options";
export { hashToolCall, hashOutcome } from "./stable-hash";
export type { HashOutcomeOptions, ToolOutcome } from "./stable-hash";
export { ToolLoopDetector } from "./loop-detector";
export type { DetectOptions, LoopDetectorStats, ToolCallInput, ToolOutcomeInput } from "./loop-detector";
export type { LoopDetection, LoopDetectionResult, LoopDetectorKind, LoopLevel } from "./loop-detection-result";
export type { ToolCallRecord } from "./tool-call-record";
export { PostCompactionGuard } from "./post-compaction-guard";
export type {
  PostCompactionCall,
  PostCompactionGuardOptions,
  PostCompactionObservation,
} from "./post-compaction-guard";
export { ToolLoopError } from "./tool-loop-error";
export type { ToolLoopErrorOptions } from "./tool-loop-error";
export { PostCompactionLoopPersistedError } from "./post-compaction-loop-persisted-error";
export { UnknownToolError } from "./unknown-tool-error";
