import {
  checkLoopDetectionOptions,
  type LoopDetectionOptions,
  type LoopDetectionToolOverride,
  type LoopDetectorSwitches,
  type PostCompactionGuardConfig,
} from "./loop-detection-options";

/**
 * The resolved tool-loop detection settings, every field present. Build one
 * with {@link resolveLoopDetectionConfig}; write partial ones as
 * {@link LoopDetectionOptions}.
 */
export interface LoopDetectionConfig {
  /** Master switch of the rolling-history detectors. @default false */
  enabled: boolean;
  /**
   * Recorded calls kept per run; detectors see only this window. Raised to
   * at least `globalCircuitBreakerThreshold` (and `unknownToolThreshold`), so
   * a small window never switches a detector off.
   * @default 30
   */
  historySize: number;
  /** Repetitions before a warning. @default 10 */
  warningThreshold: number;
  /** Repetitions before a block; at least `warningThreshold + 1`. @default 20 */
  criticalThreshold: number;
  /** Attempts at one missing tool in a row before a block. @default 10 */
  unknownToolThreshold: number;
  /**
   * Identical no-progress outcomes before the breaker blocks, whatever the
   * detector switches; also the length of an `argument_churn` cycle. At
   * least `criticalThreshold + 1`.
   * @default 30
   */
  globalCircuitBreakerThreshold: number;
  /** Blocks in one run after which the runtime ends it with `ToolLoopError`. @default 3 */
  maxBlockedCalls: number;
  /** Detector switches, merged one by one. */
  detectors: LoopDetectorSwitches;
  /** Post-compaction guard settings, merged one by one. */
  postCompactionGuard: PostCompactionGuardConfig;
  /** Tools whose repeated calls are polling (a tool may also declare `poll: true`). @default [] */
  pollTools: readonly string[];
  /** Result keys ignored by outcome hashes, at any depth (durations, pids, ids, timestamps). */
  volatileKeys: readonly string[];
  /** Per-tool settings by tool name. @default {} */
  toolOverrides: Readonly<Record<string, LoopDetectionToolOverride>>;
}

/**
 * The defaults of tool-loop detection (OpenClaw's numbers): off, a window of
 * 30 calls, warning at 10, block at 20, breaker at 30.
 *
 * @example
 * ```ts
 * const volatileKeys = [...DEFAULT_LOOP_DETECTION_CONFIG.volatileKeys, "etag"];
 * ```
 */
export const DEFAULT_LOOP_DETECTION_CONFIG: Readonly<LoopDetectionConfig> = Object.freeze({
  enabled: false,
  historySize: 30,
  warningThreshold: 10,
  criticalThreshold: 20,
  unknownToolThreshold: 10,
  globalCircuitBreakerThreshold: 30,
  maxBlockedCalls: 3,
  detectors: Object.freeze({
    genericRepeat: true,
    knownPollNoProgress: true,
    pingPong: true,
    argumentChurn: true,
    repeatedError: true,
  }),
  postCompactionGuard: Object.freeze({ windowSize: 3, enabled: true }),
  pollTools: Object.freeze([]) as readonly string[],
  volatileKeys: Object.freeze([
    "durationMs",
    "duration_ms",
    "elapsedMs",
    "elapsed_ms",
    "pid",
    "startedAt",
    "started_at",
    "startTime",
    "finishedAt",
    "finished_at",
    "cwd",
    "sessionId",
    "session_id",
    "requestId",
    "request_id",
    "traceId",
    "trace_id",
    "runId",
    "run_id",
    "messageId",
    "message_id",
    "fileId",
    "file_id",
    "pollId",
    "poll_id",
    "receipt",
    "idempotencyKey",
    "idempotency_key",
    "sentAt",
    "sent_at",
    "deliveredAt",
    "delivered_at",
    "createdAt",
    "created_at",
    "timestamp",
    "ts",
  ]) as readonly string[],
  toolOverrides: Object.freeze({}),
});

type NumberField =
  | "historySize"
  | "warningThreshold"
  | "criticalThreshold"
  | "unknownToolThreshold"
  | "globalCircuitBreakerThreshold"
  | "maxBlockedCalls";

/** A positive integer, else undefined so the layer beneath shows through (types are checked before). */
function positiveInteger(value: number | undefined): number | undefined {
  return value !== undefined && Number.isInteger(value) && value > 0 ? value : undefined;
}

function pickNumber(field: NumberField, layers: readonly (LoopDetectionOptions | undefined)[]): number {
  for (const layer of layers) {
    const value = positiveInteger(layer?.[field]);
    if (value !== undefined) return value;
  }
  return DEFAULT_LOOP_DETECTION_CONFIG[field];
}

function pickSwitch(
  field: keyof LoopDetectorSwitches,
  layers: readonly (LoopDetectionOptions | undefined)[],
): boolean {
  for (const layer of layers) {
    const value = layer?.detectors?.[field];
    if (value !== undefined) return value;
  }
  return DEFAULT_LOOP_DETECTION_CONFIG.detectors[field];
}

function pickList(
  field: "pollTools" | "volatileKeys",
  layers: readonly (LoopDetectionOptions | undefined)[],
): readonly string[] {
  for (const layer of layers) {
    const value = layer?.[field];
    if (value !== undefined) return [...value];
  }
  return [...DEFAULT_LOOP_DETECTION_CONFIG[field]];
}

/** Configs returned by {@link resolveLoopDetectionConfig} (frozen, so they cannot change after the check). */
const RESOLVED = new WeakSet<object>();

/**
 * Resolves the loop-detection settings of one agent: the per-agent options
 * overlay the global ones field by field (nested `detectors` and
 * `postCompactionGuard` too, so switching one detector off keeps its
 * siblings), over {@link DEFAULT_LOOP_DETECTION_CONFIG}.
 *
 * - Unknown keys (at any level) and values of the wrong type are a
 *   `TypeError` naming the option path and the expected type, so a typo
 *   (`enable: true`, `enabled: "true"`) never leaves detection silently off.
 * - A number that is not a positive integer is ignored (the layer beneath
 *   shows through, finally the default).
 * - `criticalThreshold <= warningThreshold` is raised to `warningThreshold + 1`,
 *   then a breaker `<= criticalThreshold` to `criticalThreshold + 1`.
 * - `historySize` is raised to the largest threshold the window must hold
 *   (the breaker's, or `unknownToolThreshold` when larger): a detector whose
 *   threshold exceeds the window could never fire.
 * - Lists (`pollTools`, `volatileKeys`) replace the list beneath;
 *   `toolOverrides` merge by tool name, the agent's entry winning.
 * - `postCompactionGuard.enabled` follows the merged master switch unless
 *   set: the guard is on unless `enabled` is explicitly `false`.
 *
 * Passing an already resolved config returns an equal one.
 *
 * @example
 * ```ts
 * const config = resolveLoopDetectionConfig(
 *   { enabled: true, warningThreshold: 5 },
 *   { detectors: { pingPong: false } },
 * );
 * config.criticalThreshold; // 20
 * config.detectors.genericRepeat; // true
 * ```
 *
 * @throws {TypeError} on an unknown key or a value of the wrong type in either layer
 *   (`Invalid loopDetection option 'enabled': expected a boolean, got "true"`)
 */
export function resolveLoopDetectionConfig(
  global?: LoopDetectionOptions,
  perAgent?: LoopDetectionOptions,
): LoopDetectionConfig {
  // A config this function produced is already checked and complete (a detector built per loop from one).
  if (perAgent === undefined && global !== undefined && RESOLVED.has(global)) return global as LoopDetectionConfig;
  checkLoopDetectionOptions(global);
  checkLoopDetectionOptions(perAgent);
  const layers = [perAgent, global] as const;
  const enabledSetting = perAgent?.enabled ?? global?.enabled;

  const warningThreshold = pickNumber("warningThreshold", layers);
  let criticalThreshold = pickNumber("criticalThreshold", layers);
  if (criticalThreshold <= warningThreshold) criticalThreshold = warningThreshold + 1;
  let globalCircuitBreakerThreshold = pickNumber("globalCircuitBreakerThreshold", layers);
  if (globalCircuitBreakerThreshold <= criticalThreshold) globalCircuitBreakerThreshold = criticalThreshold + 1;

  let windowSize = DEFAULT_LOOP_DETECTION_CONFIG.postCompactionGuard.windowSize;
  for (const layer of layers) {
    const value = positiveInteger(layer?.postCompactionGuard?.windowSize);
    if (value !== undefined) {
      windowSize = value;
      break;
    }
  }
  const guardEnabled =
    perAgent?.postCompactionGuard?.enabled ?? global?.postCompactionGuard?.enabled ?? enabledSetting !== false;
  const unknownToolThreshold = pickNumber("unknownToolThreshold", layers);
  // The window must hold as many calls as the largest threshold, or that detector can never fire.
  const historySize = Math.max(pickNumber("historySize", layers), globalCircuitBreakerThreshold, unknownToolThreshold);

  const config: LoopDetectionConfig = {
    enabled: enabledSetting ?? DEFAULT_LOOP_DETECTION_CONFIG.enabled,
    historySize,
    warningThreshold,
    criticalThreshold,
    unknownToolThreshold,
    globalCircuitBreakerThreshold,
    maxBlockedCalls: pickNumber("maxBlockedCalls", layers),
    detectors: {
      genericRepeat: pickSwitch("genericRepeat", layers),
      knownPollNoProgress: pickSwitch("knownPollNoProgress", layers),
      pingPong: pickSwitch("pingPong", layers),
      argumentChurn: pickSwitch("argumentChurn", layers),
      repeatedError: pickSwitch("repeatedError", layers),
    },
    postCompactionGuard: { windowSize, enabled: guardEnabled },
    pollTools: pickList("pollTools", layers),
    volatileKeys: pickList("volatileKeys", layers),
    toolOverrides: mergeToolOverrides(global?.toolOverrides, perAgent?.toolOverrides),
  };
  Object.freeze(config.detectors);
  Object.freeze(config.postCompactionGuard);
  Object.freeze(config.pollTools);
  Object.freeze(config.volatileKeys);
  for (const override of Object.values(config.toolOverrides)) {
    // The override objects are copies; their lists are still the caller's, so freeze copies of those.
    if (override.volatileKeys !== undefined) override.volatileKeys = Object.freeze([...override.volatileKeys]);
    Object.freeze(override);
  }
  Object.freeze(config.toolOverrides);
  RESOLVED.add(Object.freeze(config));
  return config;
}

/** Overrides by tool name, the agent's entry winning; entries left `undefined` are not set. */
function mergeToolOverrides(
  ...layers: (Readonly<Record<string, LoopDetectionToolOverride | undefined>> | undefined)[]
): Record<string, LoopDetectionToolOverride> {
  const merged: Record<string, LoopDetectionToolOverride> = {};
  for (const layer of layers) {
    if (layer === undefined) continue;
    for (const [toolName, override] of Object.entries(layer)) {
      if (override !== undefined) merged[toolName] = { ...override };
    }
  }
  return merged;
}
