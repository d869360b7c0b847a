import type { ChainLimits } from "@rein/guard";
import type { Logger } from "pino";
import type { ReachPolicy } from "@rein/guard";
import type { ModelProvider } from "../model/model-provider";
import type { ResolvedLoopDetection } from "./loop-guard";
import type { RunEventListener } from "./runtime-events";
import type { Pricing } from "./run-result";

/**
 * Everything one model-tool loop needs from its runtime and its agent,
 * resolved before the loop starts. Each loop gets its own: a nested
 * agent's settings never leak into the loop that called it, and the loop
 * never reads the Runtime itself.
 * @internal
 */
export interface LoopSettings {
  /** The provider, or the error that creating the default one raised (reported when the loop starts). */
  readonly provider: () => ModelProvider;
  /** The runtime's model id; the request's and then the provider's apply when absent. */
  readonly model: string | undefined;
  readonly maxIterations: number;
  /** Model requests shared by the run; a nested loop can only lower it. */
  readonly maxSteps: number;
  readonly maxContextTokens: number | undefined;
  /** The recursion ceiling, shown to the model in the situational prefix. */
  readonly recursionLimit: number;
  /** The runtime's guard limits: the calls its loop runs that have no agent of their own (a `tool()`, an MCP tool) keep them. */
  readonly chainLimits: ChainLimits | undefined;
  readonly loopDetection: ResolvedLoopDetection;
  readonly logger: Logger;
  readonly onEvent: RunEventListener | undefined;
  /** Prices per model, for the run's `usage.costUsd`. */
  readonly pricing: Pricing | undefined;
  /** The runtime's reach policy: a run with none from its caller starts one. */
  readonly reach: ReachPolicy | undefined;
  /** Spans carry message content and tool arguments/results (`telemetry.captureContent`). */
  readonly captureContent: boolean;
}
