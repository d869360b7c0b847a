import type { LoopDetectionOptions } from "@rein/guard";
import type { Context } from "../context/context";
import type { ContentBlock } from "../model/content";
import type { ToolChoice } from "../model/model-provider";
import type { Tool } from "../tools/tool";
import type { ParametersSchema } from "../tools/schema";
import type { RunEventListener } from "./runtime-events";
import type { RunResult } from "./run-result";
import type { RunResumption } from "./turn-pause";
import { abortSignal, content, context, effort, loopDetection, modelId, toolChoice, toolList } from "../options/core-rules";
import { optionSchema } from "@rein/session";

const { func, optionsSchema, positiveInteger, required, rule, string } = optionSchema;

/** One model-tool loop to run. */
export interface ExecRequest {
  /** The new user content: a prompt or content blocks. */
  content: string | readonly ContentBlock[];
  /** Instructions: the constant system prefix. @default "" */
  system?: string;
  /** Tools the model may call. @default none */
  tools?: readonly Tool[];
  toolChoice?: ToolChoice;
  /** @default the runtime's maxIterations */
  maxIterations?: number;
  signal?: AbortSignal;
  /** @default the runtime's model, else the provider's */
  model?: string;
  effort?: "low" | "medium" | "high";
  /** The Context whose blocks and history the requests use. @default the current call's */
  context?: Context;
  /** Per-agent tool-loop detection settings, overlaid on the runtime's. */
  loopDetection?: LoopDetectionOptions;
  /**
   * The final answer must match this schema (a zod / Standard Schema or a
   * JSON Schema object): sent as the provider's native structured output,
   * validated, repaired once, else `OutputValidationError`. The result's
   * `output` (and `run.output`) carries the value.
   */
  responseFormat?: ParametersSchema;
  /**
   * Input steered in while the run goes (`agent.steer`): called before each
   * model request; what it returns joins that request's user turn.
   * @internal
   */
  steering?: () => readonly string[];
  /**
   * A turn: a tool call awaiting approval pauses the run (the result's
   * `paused`) instead of failing; `resume` carries on a paused run.
   * @internal
   */
  turn?: { readonly resume?: RunResumption; readonly pauseRequested?: () => boolean };
  /** Called with the run's result when it ends, completed or not. @internal */
  onFinish?: (result: RunResult) => void;
  /** The agent running the loop (its class name), stamped on the run's events. @default "" */
  agent?: string;
  /**
   * One more listener for this run's events (and its nested runs'), with a
   * gate the run awaits at safe points while the listener's buffer is full.
   * `agent.stream()` uses it.
   * @internal
   */
  listener?: { readonly deliver: RunEventListener; readonly gate: () => Promise<void> | undefined };
}

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
