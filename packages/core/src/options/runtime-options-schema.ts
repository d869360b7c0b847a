import type { ExecRequest, RuntimeOptions } from "../runtime/runtime";
import { checkLoopDetection } from "./agent-options-schema";
import { abortSignal, content, context, effort, loopDetection, modelId, provider, toolChoice, toolList } from "./core-rules";
import { boolean, func, hasMethods, object, optionsSchema, positiveInteger, recordOf, required, rule, string } from "./option-schema";

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

/** {@link ExecRequest}: what `runtime.exec` takes. */
export const execRequestSchema = optionsSchema<ExecRequest>("Runtime.exec", {
  content: required(content),
  system: string,
  tools: toolList,
  toolChoice,
  maxIterations: positiveInteger,
  signal: abortSignal,
  model: modelId,
  effort,
  context,
  loopDetection,
  responseFormat: rule("a zod schema or a JSON Schema object", (value) => typeof value === "object" && value !== null && !Array.isArray(value), "object"),
  agent: string,
  steering: func("a function () => string[]"),
  turn: rule("a turn marker", (value) => typeof value === "object" && value !== null, "object"),
  onFinish: func("a function (result) => void"),
  listener: rule("a run listener", (value) => typeof value === "object" && value !== null, "object"),
});

/** Checks `Runtime` constructor options, loop-detection settings included (so they fail here, not at the first request). */
export function checkRuntimeOptions(options: unknown): RuntimeOptions {
  const parsed = runtimeOptionsSchema.parse(options);
  if (parsed.loopDetection !== undefined) checkLoopDetection("Runtime", parsed.loopDetection);
  return parsed;
}

/**
 * Checks a `runtime.exec` request: its fields, and that a forced
 * `toolChoice` can be honoured by the tools offered.
 */
export function checkExecRequest(request: unknown): ExecRequest {
  const parsed = execRequestSchema.parse(request);
  const choice = parsed.toolChoice;
  if (choice === undefined || choice === "auto" || choice === "none") return parsed;
  const names = (parsed.tools ?? []).map((tool) => tool.spec.name);
  if (choice === "required" && names.length === 0) {
    throw new TypeError(`Invalid Runtime.exec option toolChoice: "required" — the request offers no tools to call`);
  }
  if (typeof choice === "object" && !names.includes(choice.name)) {
    throw new TypeError(
      `Invalid Runtime.exec option toolChoice: names tool '${choice.name}', which the request does not offer (its tools: ${names.join(", ") || "none"})`,
    );
  }
  return parsed;
}
