/**
 * The options of the `Runtime` constructor and their schema, in one file:
 * runtime.ts imports both, and nothing here imports back.
 */
import type { Logger } from "pino";
import type { LoopDetectionOptions, ReachPolicy, ReachPolicyOptions } from "@rein/guard";
import type { ModelProvider } from "../model/model-provider";
import { checkLoopDetection, loopDetection, modelId, provider } from "../options/core-rules";
import { optionSchema } from "@rein/session";
import type { TelemetryOptions } from "../telemetry/telemetry-options";
import type { Pricing } from "./run-result";
import type { RunEventListener } from "./runtime-events";

const { boolean, func, hasMethods, object, optionsSchema, positiveInteger, recordOf, required, rule } = optionSchema;

/** Options of the `Runtime` constructor. */
export interface RuntimeOptions {
  /** The model provider. @default the factory installed with `setDefaultProviderFactory` (the `rein` package installs one reading the environment) */
  provider?: ModelProvider;
  /** Model id used when an agent names none. @default the provider's own */
  model?: string;
  /** Active frames of one function allowed on a chain. @default 5 */
  recursionLimit?: number;
  /** Repeats of a call cycle allowed. @default 2 */
  maxCycleRepeats?: number;
  /** Frames allowed on one chain. @default 25 */
  maxChainDepth?: number;
  /** Model requests per model-tool loop. @default 20 */
  maxIterations?: number;
  /** Model requests shared by a run and every run nested in it. @default 100 */
  maxSteps?: number;
  /** A pino logger. @default silent, unless REIN_LOG_LEVEL is set */
  logger?: Logger;
  /** Receives every {@link RunEvent} of runs on this runtime, nested agents' included. */
  onEvent?: RunEventListener;
  /**
   * Global tool-loop detection settings; agents overlay theirs field by
   * field. Detection is ON in the Runtime unless this or an agent says
   * `{ enabled: false }`.
   * @default { enabled: true } with the thresholds of `DEFAULT_LOOP_DETECTION_CONFIG`
   */
  loopDetection?: LoopDetectionOptions;
  /** Compact the conversation before a request whose estimated size exceeds this many tokens. @default only on a provider's context overflow */
  maxContextTokens?: number;
  /** Prices per model (US dollars per million tokens), for `RunResult.usage.costUsd`. @default no cost figures */
  pricing?: Pricing;
  /**
   * The reach policy of runs on this runtime (a `ReachPolicy`, e.g. from
   * `loadReachConfig()`, or its options): logic depth, memory, trust zone,
   * tokens, cost and deadline. @default none
   */
  reach?: ReachPolicy | ReachPolicyOptions;
  /**
   * OpenTelemetry spans of this runtime's runs (made only when the app
   * registers an OpenTelemetry SDK). Message content, tool arguments and
   * tool results go on spans only with `captureContent: true`.
   * @default { captureContent: false }
   */
  telemetry?: TelemetryOptions;
}


const nonNegativeNumber = rule("a non-negative number", (value) => typeof value === "number" && Number.isFinite(value) && value >= 0, "number");

/** {@link RuntimeOptions}: the `Runtime` constructor. */
export const runtimeOptionsSchema = optionsSchema<RuntimeOptions>("Runtime", {
  provider,
  model: modelId,
  recursionLimit: positiveInteger,
  maxCycleRepeats: positiveInteger,
  maxChainDepth: positiveInteger,
  maxIterations: positiveInteger,
  maxSteps: positiveInteger,
  logger: hasMethods("a pino logger (an object with debug, info, warn and error methods)", "debug", "info", "warn", "error"),
  onEvent: func("a function (event) => void"),
  loopDetection,
  maxContextTokens: positiveInteger,
  pricing: recordOf(
    object(
      { inputPerMTok: required(nonNegativeNumber), outputPerMTok: required(nonNegativeNumber), cachedInputPerMTok: nonNegativeNumber, cacheCreationPerMTok: nonNegativeNumber },
      "{ inputPerMTok, outputPerMTok, cachedInputPerMTok?, cacheCreationPerMTok? } (US dollars per million tokens)",
    ),
    "a pricing table { [model]: { inputPerMTok, outputPerMTok, cachedInputPerMTok? } }",
  ),
  reach: rule("a ReachPolicy or its options", (value) => typeof value === "object" && value !== null && !Array.isArray(value), "object"),
  telemetry: object({ captureContent: boolean }, "{ captureContent?: boolean }"),
});

/** Checks `Runtime` constructor options, loop-detection settings included (so they fail here, not at the first request). */
export function checkRuntimeOptions(options: unknown): RuntimeOptions {
  const parsed = runtimeOptionsSchema.parse(options);
  if (parsed.loopDetection !== undefined) checkLoopDetection("Runtime", parsed.loopDetection);
  return parsed;
}
