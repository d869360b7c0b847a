import type { GuardError, LoopDetectorKind, ReachStatus } from "@rein/guard";
import type { ModelRetry, StopReason, Usage } from "../model/model-provider";
import type { SessionNodeRole, SessionNodeStatus } from "@rein/session";
import type { RunResult } from "./run-result";

/**
 * What every {@link RunEvent} carries: the agent that produced it.
 * @example
 * ```ts
 * if (event.agentPath.length > 1) console.log(`${event.agentPath.join(" > ")}: ${event.type}`);
 * ```
 */
export interface RunEventSource {
  /** The producing agent's class name (`""` for a bare `runtime.exec`). */
  readonly agent: string;
  /** The agents from the outermost run down to the producing one; nested agents' events keep theirs. */
  readonly agentPath: readonly string[];
}

/**
 * The body of a {@link RunEvent}: what the runtime reports, before the
 * producing agent is stamped on it.
 */
export type RunEventBody =
  | { readonly type: "run-start"; readonly model: string }
  | { readonly type: "model-request"; readonly step: number; readonly model: string; readonly functionName?: string }
  /** The provider is about to send the step's request again after `waitMs` (a 429's retry-after, a 5xx backoff). */
  | ({ readonly type: "model-retry"; readonly step: number } & ModelRetry)
  | { readonly type: "text-delta"; readonly step: number; readonly text: string }
  | { readonly type: "model-response"; readonly step: number; readonly stopReason: StopReason; readonly usage: Usage }
  | { readonly type: "tool-call"; readonly toolCallId: string; readonly name: string; readonly input: unknown }
  | {
      readonly type: "tool-result";
      readonly toolCallId: string;
      readonly name: string;
      /** What the model sees as the result (a tool error's message when `isError`). */
      readonly output: unknown;
      readonly isError: boolean;
    }
  | {
      readonly type: "guard-refusal";
      readonly toolCallId: string;
      readonly name: string;
      readonly error: GuardError;
      /** True when this refusal ended the whole run. */
      readonly aborted: boolean;
    }
  | {
      /** `loop-warning`: the model is told; `loop-block`: the call did not run. */
      readonly type: "loop-warning" | "loop-block";
      readonly toolCallId: string;
      readonly name: string;
      readonly detector: LoopDetectorKind;
      readonly count: number;
      readonly message: string;
    }
  | {
      /** A session node opened (`phase: "start"`, a code node) or finished (`"end"`, with its status). */
      readonly type: "node";
      readonly phase: "start" | "end";
      readonly nodeId: string;
      readonly role: SessionNodeRole;
      readonly name: string;
      readonly status?: SessionNodeStatus;
    }
  | { readonly type: "context-compacted"; readonly removedMessages: number; readonly summaryNodeId?: string }
  | ({ readonly type: "reach-status" } & ReachStatus)
  | { readonly type: "run-finish"; readonly result: RunResult };

/**
 * Everything a run reports — to `onEvent` listeners and through
 * `agent.stream()` — as a discriminated union on `type`, each event
 * stamped with the agent that produced it. Listeners must be quick and must
 * not throw; an exception from a listener is logged and ignored.
 * @example
 * ```ts
 * const runtime = new Runtime({
 *   onEvent: (event) => {
 *     if (event.type === "tool-call") console.log(`${event.agent} calls ${event.name}`);
 *   },
 * });
 * ```
 */
export type RunEvent = RunEventBody & RunEventSource;

/** A listener for {@link RunEvent}s. */
export type RunEventListener = (event: RunEvent) => void;

/** @deprecated the same as {@link RunEvent}. */
export type RuntimeEvent = RunEvent;
/** @deprecated the same as {@link RunEventListener}. */
export type RuntimeEventListener = RunEventListener;
