import { CancelledError, type TurnContinuation } from "rein";
import type { Flight } from "./flight";
import type { ApprovalAnswer, ApprovalHolder, ApprovalOutcome, PendingApproval, ResumedTurn } from "./approvals";
import { whenAborted } from "./when-aborted";

/** A served run's value that is a turn paused on an approval: the `TurnResult` of `runTurn`/`chat`. @internal */
export interface PausedTurn {
  readonly continuation: TurnContinuation;
  readonly awaiting: { readonly toolCallId: string; readonly toolName: string; readonly input: unknown };
}

/**
 * The paused turn an entry returned, if it returned one that waits for an
 * approval (`{ status: "paused", continuation: { reason: "approval", awaiting } }`);
 * a turn paused by `agent.pause()` waits for no one's answer here.
 * @internal
 */
export function pausedTurnOf(value: unknown): PausedTurn | undefined {
  if (typeof value !== "object" || value === null || (value as { status?: unknown }).status !== "paused") return undefined;
  const continuation = (value as { continuation?: unknown }).continuation as TurnContinuation | undefined;
  if (typeof continuation !== "object" || continuation === null || continuation.reason !== "approval") return undefined;
  const awaiting = continuation.awaiting;
  if (typeof awaiting !== "object" || awaiting === null || typeof awaiting.toolCallId !== "string" || typeof awaiting.toolName !== "string") return undefined;
  return { continuation, awaiting };
}

/**
 * A paused turn's approval, held by the server under its run: listed by
 * `GET /v1/runs/:id/approvals` like a call of a run in flight, and answered
 * by the same `POST /v1/runs/:id/approvals/:toolCallId`, once — the answer
 * resumes the continuation (`resumeTurn(continuation, { approve })`, which
 * the store consumes once) and resolves when the resumed turn has ended.
 * Unanswered for the server's `approvalTimeoutMs`, it is dropped (not
 * resumed: nothing runs or is paid for unwatched); the run's caller still
 * holds the continuation.
 * @internal
 */
export class PausedApproval implements ApprovalHolder {
  #waiting: PendingApproval | undefined;
  readonly #timer: ReturnType<typeof setTimeout>;

  constructor(
    paused: PausedTurn,
    timeoutMs: number,
    private readonly answered: Set<string>,
    private readonly admit: () => Promise<Flight>,
    private readonly resume: (approve: boolean, flight: Flight) => Promise<ResumedTurn>,
    onExpired: () => void,
  ) {
    const requestedAt = Date.now();
    const { toolCallId, toolName, input } = paused.awaiting;
    this.#waiting = { toolCallId, toolName, input, requestedAt, expiresAt: requestedAt + timeoutMs };
    this.#timer = setTimeout(() => {
      if (this.#take() !== undefined) onExpired();
    }, timeoutMs);
    this.#timer.unref?.();
  }

  pending(): PendingApproval[] {
    return this.#waiting === undefined ? [] : [this.#waiting];
  }

  answer(toolCallId: string, approve: boolean, request?: AbortSignal): ApprovalAnswer | Promise<ApprovalOutcome> {
    const waiting = this.#waiting;
    if (waiting?.toolCallId !== toolCallId) return this.answered.has(toolCallId) ? "already-answered" : "no-such-call";
    // The resumed turn is a run like any other: in flight, in a run slot of its key. Both are taken before the
    // answer counts, so a refusal (429 over the key's caps) leaves the call waiting for a later answer.
    return this.admit().then((flight): Promise<ApprovalOutcome> | ApprovalOutcome => {
      if (this.#waiting !== waiting) {
        flight.land();
        return { answer: "already-answered" };
      }
      this.#take();
      // The answering request waits for the resumed turn, as a run's request does: its client hanging up cancels it.
      const hungUp = () => flight.controller.abort(new CancelledError("the client disconnected"));
      const stopListening = request === undefined ? undefined : whenAborted(request, hungUp);
      const resumed = this.resume(approve, flight).finally(() => stopListening?.());
      return resumed.then((turn) => ({ answer: "answered", resumed: turn }));
    });
  }

  /** Forgets the wait (the run's id was reused, or the server closes). */
  close(): void {
    this.#take();
  }

  /** Takes the waiting call, once: it counts as answered from now on. */
  #take(): PendingApproval | undefined {
    const waiting = this.#waiting;
    if (waiting === undefined) return undefined;
    this.#waiting = undefined;
    clearTimeout(this.#timer);
    this.answered.add(waiting.toolCallId);
    return waiting;
  }
}
