import type { GuardError, LoopDetectorKind } from "@rein/guard";
import type { StopReason, Usage } from "../model/model-provider";
import type { SessionNodeRole, SessionNodeStatus } from "../session/session-node";

/**
 * Everything the runtime reports through `onEvent`, as a discriminated union
 * on `type` (noun-action). Listeners must be quick and must not throw; an
 * exception from a listener is logged and ignored.
 */
export type RuntimeEvent =
  | { readonly type: "node-start"; readonly nodeId: string; readonly role: SessionNodeRole; readonly name: string }
  | {
      readonly type: "node-end";
      readonly nodeId: string;
      readonly role: SessionNodeRole;
      readonly name: string;
      readonly status: SessionNodeStatus;
    }
  | { readonly type: "model-request"; readonly step: number; readonly model: string; readonly functionName?: string }
  | { readonly type: "model-response"; readonly step: number; readonly stopReason: StopReason; readonly usage: Usage }
  | { readonly type: "tool-call"; readonly toolName: string; readonly toolCallId: string; readonly input: unknown }
  | { readonly type: "tool-result"; readonly toolName: string; readonly toolCallId: string }
  | { readonly type: "tool-error"; readonly toolName: string; readonly toolCallId: string; readonly message: string }
  | {
      readonly type: "guard-refusal";
      readonly toolName: string;
      readonly toolCallId: string;
      readonly error: GuardError;
      /** True when this refusal ended the whole run. */
      readonly aborted: boolean;
    }
  | {
      readonly type: "loop-warning" | "tool-blocked";
      readonly toolName: string;
      readonly toolCallId: string;
      readonly detector: LoopDetectorKind;
      readonly count: number;
      readonly message: string;
    }
  | { readonly type: "context-compacted"; readonly removedMessages: number; readonly summaryNodeId?: string };

/** A listener for {@link RuntimeEvent}s. */
export type RuntimeEventListener = (event: RuntimeEvent) => void;
