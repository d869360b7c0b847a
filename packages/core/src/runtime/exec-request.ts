import type { LoopDetectionOptions } from "@rein/guard";
import type { Context } from "../context/context";
import type { ContentBlock } from "../model/content";
import type { ToolChoice } from "../model/model-provider";
import type { Tool } from "../tools/tool";
import type { ParametersSchema } from "../tools/schema";
import type { RunEventListener } from "./runtime-events";
import type { RunResult } from "./run-result";
import type { RunResumption } from "./turn-pause";

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
