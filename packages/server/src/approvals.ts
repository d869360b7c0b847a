import type { RunEvent, ToolApprover } from "rein";
import type { Caller } from "./auth/caller";
import { flightFor, flightKey } from "./ownership";
import { whenAborted } from "./when-aborted";

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
  /** Epoch ms when the call began to wait (absent in a background run's log written by an earlier version). */
  readonly requestedAt?: number;
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

/**
 * How a paused turn resumed by an answer ended (`POST
 * /v1/runs/:id/approvals/:toolCallId` on a run whose turn paused): its
 * status and the entry's new value, the resumed `TurnResult`.
 * @example
 * ```ts
 * const { resumed } = (await response.json()) as { resumed?: ResumedTurn };
 * if (resumed?.status === "completed") console.log(resumed.result);
 * ```
 */
export interface ResumedTurn {
  readonly status: "completed" | "paused" | "error" | "cancelled";
  /** The resumed turn's `TurnResult` (null when it failed or was cancelled). */
  readonly result: unknown;
  readonly error?: { readonly name: string; readonly message: string };
}

/** What answering an approval did, and for a paused turn how its resume ended. @internal */
export interface ApprovalOutcome {
  readonly answer: ApprovalAnswer;
  readonly resumed?: ResumedTurn;
}

/**
 * What waits for a person's answer under one run: the calls of a run in
 * flight ({@link RunApprovals}) or a paused turn's continuation
 * (`PausedApproval`). @internal
 */
export interface ApprovalHolder {
  pending(): PendingApproval[];
  /** `request` is the answering request's signal: a paused turn the answer resumes is cancelled when that client hangs up. */
  answer(toolCallId: string, approve: boolean, request?: AbortSignal): ApprovalAnswer | Promise<ApprovalOutcome>;
}

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
export class RunApprovals implements ApprovalHolder {
  readonly #waiting = new Map<string, Waiting>();
  readonly #answered: Set<string>;
  readonly #calls: SeenCall[] = [];
  readonly #claimed = new Set<string>();
  #closed = false;
  #fallbackIds = 0;

  /**
   * @param answered the calls of this run answered so far, shared with
   * whatever held its approvals before (a paused turn): each is answered once.
   * @param expire what a call's timeout does: by default it denies the call;
   * given, it is told the call's id and must {@link RunApprovals.answer} it
   * (a background run's worker first records the denial, insert-once, so an
   * answer recorded before it wins and one sent after it is refused).
   */
  constructor(
    private readonly timeoutMs: number,
    private readonly emit: (event: ApprovalRequestEvent) => void,
    signal: AbortSignal,
    answered: Set<string> = new Set(),
    private readonly expire?: (toolCallId: string) => void,
  ) {
    this.#answered = answered;
    // A cancelled run denies what it waits for: nothing it asked may run later.
    whenAborted(signal, () => this.close());
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
      const timer = setTimeout(() => (this.expire === undefined ? decide(false) : this.expire(toolCallId)), this.timeoutMs);
      timer.unref?.();
      const decide = (approve: boolean) => {
        if (!this.#waiting.delete(toolCallId)) return;
        clearTimeout(timer);
        this.#answered.add(toolCallId);
        resolve(approve);
      };
      this.#waiting.set(toolCallId, { toolCallId, toolName, input: args, requestedAt, expiresAt, decide });
      this.emit({ type: "approval-request", agent: call?.agent ?? "", agentPath: call?.agentPath ?? [], toolCallId, toolName, input: args, expiresAt, requestedAt });
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

/** Runs whose answered calls are remembered (so a late second answer is a 409, not a 404). */
const REMEMBERED_RUNS = 1_000;

/**
 * Approvals over HTTP, one home for answering one: the server's registry of
 * what waits under each run, by owner and run id (so a key reaches only its
 * own runs' approvals) — the calls of a run in flight, or the continuation
 * of a run whose turn paused — and of the calls already answered.
 * @internal
 */
export class Approvals {
  readonly #runs = new Map<string, ApprovalHolder>();
  readonly #answered = new Map<string, Set<string>>();
  constructor(readonly timeoutMs: number) {}
  /** Opens the approvals of a run starting now (or resuming); `end()` denies what still waits and forgets the run. */
  open(owner: string, runId: string, emit: (event: ApprovalRequestEvent) => void, signal: AbortSignal): { approvals: RunApprovals; end: () => void } {
    const key = flightKey(owner, runId);
    const approvals = new RunApprovals(this.timeoutMs, emit, signal, this.#answeredOf(key));
    this.#runs.set(key, approvals);
    return { approvals, end: () => this.#release(key, approvals, () => approvals.close()) };
  }
  /**
   * Holds `holder` (a paused turn's continuation) under the run until it is
   * answered or released; returns its `answered` set (answer once) and its release.
   */
  park(owner: string, runId: string, make: (answered: Set<string>) => ApprovalHolder): { holder: ApprovalHolder; release: () => void } {
    const key = flightKey(owner, runId);
    const holder = make(this.#answeredOf(key));
    this.#runs.set(key, holder);
    this.#parked.add(holder);
    return { holder, release: () => this.#release(key, holder, () => this.#parked.delete(holder)) };
  }
  /** Whether run `runId` of `owner` is a paused turn waiting here for an answer: its id names it until then. */
  isParked(owner: string, runId: string): boolean {
    const holder = this.#runs.get(flightKey(owner, runId));
    return holder !== undefined && this.#parked.has(holder);
  }
  readonly #parked = new WeakSet<ApprovalHolder>();
  /** What waits under a run `caller` may see (in flight, or paused). */
  of(caller: Caller, runId: string): ApprovalHolder | undefined {
    return flightFor(this.#runs, caller, runId);
  }
  /**
   * Answers one call, once: `no-such-run` when nothing of the run waits or
   * was answered for `caller`; a paused turn's answer resolves when its
   * resumed turn has ended.
   */
  async answer(caller: Caller, runId: string, toolCallId: string, approve: boolean, request?: AbortSignal): Promise<ApprovalOutcome> {
    const holder = this.of(caller, runId);
    if (holder !== undefined) {
      const outcome = await holder.answer(toolCallId, approve, request);
      return typeof outcome === "string" ? { answer: outcome } : outcome;
    }
    const answered = flightFor(this.#answered, caller, runId);
    return { answer: answered?.has(toolCallId) === true ? "already-answered" : "no-such-run" };
  }
  #answeredOf(key: string): Set<string> {
    let answered = this.#answered.get(key);
    if (answered === undefined) {
      answered = new Set();
      this.#answered.set(key, answered);
      if (this.#answered.size > REMEMBERED_RUNS) this.#answered.delete(this.#answered.keys().next().value as string);
    }
    return answered;
  }
  #release(key: string, holder: ApprovalHolder, close: () => void): void {
    close();
    if (this.#runs.get(key) === holder) this.#runs.delete(key);
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
