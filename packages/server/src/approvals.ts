import type { RunEvent, ToolApprover } from "rein";
import type { Caller } from "./auth/caller";
import { flightFor, flightKey } from "./ownership";

/**
 * The event a served run emits (on its SSE stream and the runs feed) when
 * one of its tool calls waits for a person: answer it with
 * `POST /v1/runs/:runId/approvals/:toolCallId` `{ approve: boolean }`.
 * @example
 * ```ts
 * if (event.type === "approval-request") await fetch(`/v1/runs/${runId}/approvals/${event.toolCallId}`, { method: "POST", body: '{"approve":true}' });
 * ```
 */
export interface ApprovalRequestEvent {
  readonly type: "approval-request";
  /** The agent whose tool call waits. */
  readonly agent: string;
  readonly agentPath: readonly string[];
  /** The tool call's id (as in its `tool-call` event). */
  readonly toolCallId: string;
  readonly toolName: string;
  /** The call's validated arguments. */
  readonly input: unknown;
  /** Epoch ms after which the call is denied unanswered. */
  readonly expiresAt: number;
}

/**
 * A tool call waiting for approval, as `GET /v1/runs/:id/approvals` lists it.
 * @example
 * ```ts
 * const { approvals } = (await (await fetch(`/v1/runs/${runId}/approvals`)).json()) as { approvals: PendingApproval[] };
 * ```
 */
export interface PendingApproval {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
  /** Epoch ms when the call started waiting. */
  readonly requestedAt: number;
  /** Epoch ms after which it is denied unanswered. */
  readonly expiresAt: number;
}

/** What answering an approval did. @internal */
export type ApprovalAnswer = "answered" | "already-answered" | "no-such-call" | "no-such-run";

interface Waiting extends PendingApproval {
  readonly decide: (approve: boolean) => void;
}

interface SeenCall {
  readonly toolCallId: string;
  readonly name: string;
  readonly agent: string;
  readonly agentPath: readonly string[];
}

/**
 * The approvals of one served run: it watches the run's `tool-call` events
 * (to name the call that asks), and its {@link RunApprovals.approver} is the
 * `approveToolCall` of the run's agent.
 * @internal
 */
export class RunApprovals {
  readonly #waiting = new Map<string, Waiting>();
  readonly #answered = new Set<string>();
  readonly #calls: SeenCall[] = [];
  readonly #claimed = new Set<string>();
  #closed = false;
  #fallbackIds = 0;

  constructor(
    private readonly timeoutMs: number,
    private readonly emit: (event: ApprovalRequestEvent) => void,
    signal: AbortSignal,
  ) {
    // A cancelled run denies what it waits for: nothing it asked may run later.
    signal.addEventListener("abort", () => this.close(), { once: true });
  }

  /** Notes the run's tool calls (the approver is asked by tool name only; the call it is for was just announced). */
  observe(event: RunEvent): void {
    if (event.type !== "tool-call") return;
    this.#calls.push({ toolCallId: event.toolCallId, name: event.name, agent: event.agent, agentPath: event.agentPath });
    if (this.#calls.length > 64) this.#calls.shift();
  }

  /** The server's approver: announces the call and waits for an answer, denied after the timeout or when the run ends. */
  readonly approver: ToolApprover = ({ toolName, args }) => {
    if (this.#closed) return false;
    const call = this.#claim(toolName);
    const toolCallId = call?.toolCallId ?? `approval-${++this.#fallbackIds}`;
    const requestedAt = Date.now();
    const expiresAt = requestedAt + this.timeoutMs;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => decide(false), this.timeoutMs);
      timer.unref?.();
      const decide = (approve: boolean) => {
        if (!this.#waiting.delete(toolCallId)) return;
        clearTimeout(timer);
        this.#answered.add(toolCallId);
        resolve(approve);
      };
      this.#waiting.set(toolCallId, { toolCallId, toolName, input: args, requestedAt, expiresAt, decide });
      this.emit({ type: "approval-request", agent: call?.agent ?? "", agentPath: call?.agentPath ?? [], toolCallId, toolName, input: args, expiresAt });
    });
  };

  /** The calls waiting now, oldest first. */
  pending(): PendingApproval[] {
    return [...this.#waiting.values()].map(({ toolCallId, toolName, input, requestedAt, expiresAt }) => ({ toolCallId, toolName, input, requestedAt, expiresAt }));
  }

  /** Answers one waiting call, once. */
  answer(toolCallId: string, approve: boolean): ApprovalAnswer {
    const waiting = this.#waiting.get(toolCallId);
    if (waiting !== undefined) {
      waiting.decide(approve);
      return "answered";
    }
    return this.#answered.has(toolCallId) ? "already-answered" : "no-such-call";
  }

  /** Denies everything still waiting (the run ended or was cancelled). */
  close(): void {
    this.#closed = true;
    for (const waiting of [...this.#waiting.values()]) waiting.decide(false);
  }

  #claim(toolName: string): SeenCall | undefined {
    for (let index = this.#calls.length - 1; index >= 0; index--) {
      const call = this.#calls[index]!;
      if (call.name === toolName && !this.#claimed.has(call.toolCallId)) {
        this.#claimed.add(call.toolCallId);
        return call;
      }
    }
    return undefined;
  }
}

/**
 * Approvals over HTTP: the server's registry of its runs' {@link RunApprovals},
 * by owner and run id (so a key reaches only its own runs' approvals).
 * @internal
 */
export class Approvals {
  readonly #runs = new Map<string, RunApprovals>();

  constructor(readonly timeoutMs: number) {}

  /** Opens the approvals of a run starting now; `end()` denies what still waits and forgets the run. */
  open(owner: string, runId: string, emit: (event: ApprovalRequestEvent) => void, signal: AbortSignal): { approvals: RunApprovals; end: () => void } {
    const key = flightKey(owner, runId);
    const approvals = new RunApprovals(this.timeoutMs, emit, signal);
    this.#runs.set(key, approvals);
    return {
      approvals,
      end: () => {
        approvals.close();
        if (this.#runs.get(key) === approvals) this.#runs.delete(key);
      },
    };
  }

  /** The approvals of a run in flight that `caller` may see. */
  of(caller: Caller, runId: string): RunApprovals | undefined {
    return flightFor(this.#runs, caller, runId);
  }
}

/** Checks `approvalTimeoutMs` at construction. @internal */
export function approvalTimeoutOf(value: unknown): number {
  if (value === undefined) return 300_000;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > 2 ** 31 - 1) {
    throw new TypeError(`createServer({ approvalTimeoutMs }): approvalTimeoutMs must be a positive number of milliseconds up to 2147483647, not ${String(value).slice(0, 40)}`);
  }
  return value;
}
