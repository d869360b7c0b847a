import type { Flight } from "./flight";
import { ContinuationConsumedError, type ReachBudget, type RunEvent, type RunEventListener, type ToolApprover, type TurnContinuation } from "rein";
import type { Caller } from "./auth/caller";
import { clientSessionId } from "./ownership";
import type { Approvals, ApprovalRequestEvent, PendingApproval, ResumedTurn } from "./approvals";
import { CANCELLED } from "./call-entry";
import { RequestError } from "./http-error";
import { PausedApproval, pausedTurnOf, type PausedTurn } from "./paused-approval";

/**
 * One run of `POST /v1/agent/run` as the runs feed (`GET /v1/runs/events`)
 * reports it: in flight or recently finished.
 * @example
 * ```ts
 * if (message.type === "run" && message.run.status === "running") show(message.run);
 * ```
 */
export interface RunSummary {
  readonly runId: string;
  readonly entry: string;
  /** The session the run records to, as the subscriber names it. */
  readonly sessionId: string;
  /**
   * `queued`: a background run (`Prefer: respond-async`) no worker has begun;
   * `paused`: the entry returned a turn paused on an approval, which waits in `approvals`.
   */
  readonly status: "queued" | "running" | "paused" | "completed" | "error" | "cancelled";
  /** Epoch ms. */
  readonly startedAt: number;
  /** Epoch ms; absent while running. */
  readonly endedAt?: number;
  /** Model requests answered so far. */
  readonly requests: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Cost in USD, from the run's reach figures (0 when unpriced). */
  readonly costUsd: number;
  /** The run's latest `reach-status` figures (limits `null` = none). */
  readonly reach?: ReachFigures;
  /** Tool calls waiting for approval. */
  readonly approvals: readonly PendingApproval[];
  /** The error of a failed run. */
  readonly error?: { readonly name: string; readonly message: string };
}

/**
 * The reach gauge of a run, from its latest `reach-status` event (an
 * unlimited dimension has `limit: null`).
 * @example
 * ```ts
 * const left = run.reach?.tokens.limit === null ? Infinity : run.reach!.tokens.limit - run.reach!.tokens.used;
 * ```
 */
export interface ReachFigures {
  readonly depth: { readonly used: number; readonly limit: number | null };
  readonly tokens: { readonly used: number; readonly limit: number | null };
  readonly costUsd: { readonly used: number; readonly limit: number | null };
  readonly memoryMb: { readonly used: number; readonly limit: number | null };
  readonly zone: string;
  readonly elapsedMs: number;
  /** `null` without a deadline. */
  readonly remainingMs: number | null;
}

/**
 * A message of the runs feed, as `data:` of an SSE event named after its
 * `type`: the runs known when the subscriber connected (`snapshot`), a
 * run's new state (`run`: started, usage, reach, approvals, finished) and
 * each event of a run in flight (`run-event`: every `RunEvent` but
 * `text-delta`, plus `approval-request`).
 * @example
 * ```ts
 * new EventSource("/v1/runs/events").addEventListener("run", (e) => render(JSON.parse(e.data).run));
 * ```
 */
export type RunFeedMessage =
  | { readonly type: "snapshot"; readonly runs: readonly RunSummary[] }
  | { readonly type: "run"; readonly run: RunSummary }
  | { readonly type: "run-event"; readonly runId: string; readonly event: RunEvent | ApprovalRequestEvent };

interface Tracked {
  readonly owner: string;
  readonly storedSessionId: string;
  summary: Omit<RunSummary, "sessionId" | "approvals">;
  pending: () => readonly PendingApproval[];
}

interface Subscriber {
  readonly caller: Caller;
  readonly send: (message: RunFeedMessage) => void;
}

/** What the run route gets back for one run: its listener, approver and end. @internal */
export interface WatchedRun {
  /** Every event of the run (feeds usage, reach and the subscribers). */
  event(event: RunEvent): void;
  /** The run's agent's `approveToolCall` (approvals over HTTP). */
  readonly approver: ToolApprover;
  /** Records how the run ended (from its answer) and closes its approvals. */
  settle<T extends { readonly response: { readonly status: RunSummary["status"]; readonly result?: unknown; readonly error?: { readonly name: string; readonly message: string } } }>(
    outcome: Promise<T>,
  ): Promise<T>;
}

/**
 * Resumes a run's paused turn on a new instance of its entry
 * (`resumeTurn(continuation, { approve })`, `callEntry`'s `resume`),
 * reporting to `onEvent`, in `flight` (taken by the run's `admitResume`:
 * its id in flight again, a run slot of its key; cancelled by its
 * controller; landed when the turn ends), with the run's approver for the
 * calls that follow. Resolves with the resumed `TurnResult`, or
 * `CANCELLED`. @internal
 */
export type ResumeEntry = (resumption: {
  readonly continuation: TurnContinuation;
  readonly approve: boolean;
  readonly flight: Flight;
  readonly onEvent: RunEventListener;
  readonly approveToolCall: ToolApprover;
}) => Promise<unknown>;

/** What {@link RunFeed.track} gives back for a background run: its log's events, then how it ended. @internal */
export interface TrackedRun {
  event(event: RunEvent | ApprovalRequestEvent): void;
  end(status: "completed" | "error" | "cancelled", error?: { readonly name: string; readonly message: string }): void;
}

/** What {@link RunFeed.watch} needs of a run. @internal */
export interface WatchOptions {
  readonly owner: string;
  readonly runId: string;
  readonly entry: string;
  readonly storedSessionId: string;
  readonly budget?: ReachBudget;
  readonly signal: AbortSignal;
  readonly emit: (event: ApprovalRequestEvent) => void;
  /** Resumes the run's paused turn; without it a paused turn is only the run's value. */
  readonly resume?: ResumeEntry;
  /** Puts the run in flight again for a resumption, before the answer counts (a 429 over the key's caps leaves the call waiting). */
  readonly admitResume?: () => Promise<Flight>;
}

const RECENT = 50;

/**
 * The server's live view of its runs: each `POST /v1/agent/run` in flight
 * and the last 50 finished, pushed to subscribers as they change (no
 * polling). Each subscriber sees only the runs its key owns (all with
 * `admin`, or without auth).
 * @internal
 */
export class RunFeed {
  readonly #runs = new Map<string, Tracked>();
  readonly #subscribers = new Set<Subscriber>();
  #next = 0;

  constructor(readonly approvals: Approvals) {}

  /**
   * Starts watching a run; `emit` sends an `approval-request` on the run's
   * own stream too. With `resume`, a run whose entry returns a turn paused
   * on an approval stays listed as `paused` with that approval waiting, and
   * answering it resumes the turn through `resume` (watched as the same run).
   */
  watch(run: WatchOptions): WatchedRun {
    return this.#attempt(this.#add(run, "running"), run, run.signal, run.emit);
  }

  /**
   * Lists a background run this server queued: `queued` until its log's
   * first event, then updated by every event the worker executing it
   * records (read from the run channel by `background/follow-queued.ts`),
   * its pending approvals those its `approval-request` events ask and no
   * `tool-result` has answered yet, until `end`.
   */
  track(run: Pick<WatchOptions, "owner" | "runId" | "entry" | "storedSessionId" | "budget">): TrackedRun {
    const tracked = this.#add(run, "queued");
    const waiting = new Map<string, PendingApproval>();
    tracked.pending = () => [...waiting.values()];
    this.#changed(tracked);
    return {
      event: (event) => {
        if (tracked.summary.status === "queued") tracked.summary = { ...tracked.summary, status: "running" };
        if (event.type === "approval-request") {
          const { toolCallId, toolName, input, expiresAt, requestedAt } = event;
          waiting.set(toolCallId, { toolCallId, toolName, input, requestedAt: requestedAt ?? expiresAt, expiresAt });
        } else if (event.type === "tool-result") waiting.delete(event.toolCallId);
        this.#apply(tracked, run.runId, event, event.type === "approval-request" || event.type === "tool-result");
      },
      end: (status, error) => {
        waiting.clear();
        tracked.summary = { ...tracked.summary, status, endedAt: Date.now(), ...(error === undefined ? {} : { error: { name: error.name, message: error.message } }) };
        this.#changed(tracked);
        this.#forgetOld();
      },
    };
  }

  #add(run: Pick<WatchOptions, "owner" | "runId" | "entry" | "storedSessionId" | "budget">, status: "queued" | "running"): Tracked {
    const startedAt = Date.now();
    const tracked: Tracked = {
      owner: run.owner,
      storedSessionId: run.storedSessionId,
      summary: {
        runId: run.runId,
        entry: run.entry,
        status,
        startedAt,
        requests: 0,
        inputTokens: 0,
        outputTokens: 0,
        costUsd: 0,
        // Until its first reach-status, a run shows the budget it was admitted with, nothing used.
        ...(run.budget === undefined ? {} : { reach: figuresOfBudget(run.budget, startedAt) }),
      },
      pending: () => [],
    };
    const key = `${++this.#next}`;
    this.#runs.set(key, tracked);
    return tracked;
  }

  /** A run's event: its usage and reach figures, then to the subscribers (the run's new state too when it changed). */
  #apply(tracked: Tracked, runId: string, event: RunEvent | ApprovalRequestEvent, changed = false): void {
    if (event.type === "text-delta") return;
    const summary = tracked.summary;
    if (event.type === "model-response") {
      tracked.summary = { ...summary, requests: summary.requests + 1, inputTokens: summary.inputTokens + event.usage.inputTokens, outputTokens: summary.outputTokens + event.usage.outputTokens };
    } else if (event.type === "reach-status") {
      const reach = figuresOf(event);
      tracked.summary = { ...summary, reach, costUsd: Math.max(summary.costUsd, reach.costUsd.used) };
    }
    this.#publish(tracked, { type: "run-event", runId, event });
    if (changed || tracked.summary !== summary || event.type === "tool-result") this.#changed(tracked);
  }

  /** One stretch of a run: its first call, or the resume of its paused turn. */
  #attempt(tracked: Tracked, run: WatchOptions, signal: AbortSignal, emit: (event: ApprovalRequestEvent) => void): WatchedRun {
    const { approvals, end } = this.approvals.open(
      run.owner,
      run.runId,
      (event) => {
        emit(event);
        this.#publish(tracked, { type: "run-event", runId: run.runId, event });
        this.#changed(tracked);
      },
      signal,
    );
    tracked.pending = () => approvals.pending();
    this.#changed(tracked);
    const feed = this;
    return {
      approver: approvals.approver,
      event(event) {
        approvals.observe(event);
        feed.#apply(tracked, run.runId, event);
      },
      async settle(outcome) {
        let paused: PausedTurn | undefined;
        try {
          const value = await outcome;
          const { status, error } = value.response;
          paused = status === "completed" && run.resume !== undefined ? pausedTurnOf(value.response.result) : undefined;
          tracked.summary = { ...tracked.summary, status: paused === undefined ? status : "paused", endedAt: Date.now(), ...(error === undefined ? {} : { error: { name: error.name, message: error.message } }) };
          return value;
        } catch (error) {
          const err = error instanceof Error ? error : new Error(String(error));
          tracked.summary = { ...tracked.summary, status: "error", endedAt: Date.now(), error: { name: err.name, message: err.message } };
          throw error;
        } finally {
          end();
          if (paused !== undefined) feed.#park(tracked, run, paused);
          feed.#changed(tracked);
          feed.#forgetOld();
        }
      },
    };
  }

  /** Holds a paused turn's approval under its run; the answer resumes the turn, watched as the same run. */
  #park(tracked: Tracked, run: WatchOptions, paused: PausedTurn): void {
    const { holder, release } = this.approvals.park(run.owner, run.runId, (answered) => {
      const resume = (approve: boolean, flight: Flight) => {
        release();
        return this.#resume(tracked, run, paused.continuation, approve, flight);
      };
      const admit = run.admitResume ?? (async (): Promise<Flight> => ({ controller: new AbortController(), keyRun: undefined, land: () => undefined }));
      return new PausedApproval(paused, this.approvals.timeoutMs, answered, admit, resume, () => {
        release();
        this.#changed(tracked);
      });
    });
    tracked.pending = () => holder.pending();
    const [waiting] = holder.pending();
    if (waiting === undefined) return;
    const { toolCallId, toolName, input, expiresAt, requestedAt } = waiting;
    const event: ApprovalRequestEvent = { type: "approval-request", agent: "", agentPath: [], toolCallId, toolName, input, expiresAt, requestedAt };
    this.#publish(tracked, { type: "run-event", runId: run.runId, event });
  }

  async #resume(tracked: Tracked, run: WatchOptions, continuation: TurnContinuation, approve: boolean, flight: Flight): Promise<ResumedTurn> {
    const { endedAt: _ended, error: _error, ...rest } = tracked.summary;
    tracked.summary = { ...rest, status: "running" };
    const watched = this.#attempt(tracked, run, flight.controller.signal, () => undefined);
    const resumed = async (): Promise<{ response: ResumedTurn }> => {
      try {
        const value = await run.resume!({ continuation, approve, flight, onEvent: (event) => watched.event(event), approveToolCall: watched.approver });
        return { response: value === CANCELLED ? { status: "cancelled", result: null } : { status: "completed", result: value ?? null } };
      } catch (error) {
        // Resumed elsewhere first (another server on the same store): the answer comes too late.
        if (ContinuationConsumedError.isInstance(error)) throw new RequestError("run_conflict", (error as Error).message);
        const err = error instanceof Error ? error : new Error(String(error));
        return { response: { status: "error", result: null, error: { name: err.name, message: err.message } } };
      }
    };
    const { response } = await watched.settle(resumed());
    return pausedTurnOf(response.result) === undefined ? response : { ...response, status: "paused" };
  }

  /** Adds a subscriber; it is sent the runs it may see now, then every change. Returns the unsubscribe. */
  subscribe(caller: Caller, send: (message: RunFeedMessage) => void): () => void {
    const subscriber: Subscriber = { caller, send };
    const runs = [...this.#runs.values()].filter((tracked) => visible(caller, tracked)).map((tracked) => summaryFor(caller, tracked));
    send({ type: "snapshot", runs });
    this.#subscribers.add(subscriber);
    return () => this.#subscribers.delete(subscriber);
  }

  #changed(tracked: Tracked): void {
    for (const subscriber of this.#subscribers) {
      if (visible(subscriber.caller, tracked)) subscriber.send({ type: "run", run: summaryFor(subscriber.caller, tracked) });
    }
  }

  #publish(tracked: Tracked, message: RunFeedMessage): void {
    for (const subscriber of this.#subscribers) {
      if (visible(subscriber.caller, tracked)) subscriber.send(message);
    }
  }

  /** Forgets the oldest finished runs past the last {@link RECENT} (the map keeps them in the order they were added). */
  #forgetOld(): void {
    let extra = -RECENT;
    for (const tracked of this.#runs.values()) if (ended(tracked)) extra++;
    for (const [key, tracked] of this.#runs) {
      if (extra <= 0) return;
      if (ended(tracked)) {
        this.#runs.delete(key);
        extra--;
      }
    }
  }
}

/** Whether a run is over for the feed: a paused run whose approval still waits for a person is kept like a running one. */
function ended(tracked: Tracked): boolean {
  const status = tracked.summary.status;
  return status !== "running" && status !== "queued" && (status !== "paused" || tracked.pending().length === 0);
}

function visible(caller: Caller, tracked: Tracked): boolean {
  return caller.seesAll || tracked.owner === caller.owner;
}

function summaryFor(caller: Caller, tracked: Tracked): RunSummary {
  return { ...tracked.summary, sessionId: clientSessionId(caller, tracked.storedSessionId), approvals: tracked.pending() };
}

function limitOf(limit: number): number | null {
  return Number.isFinite(limit) ? limit : null;
}

function figuresOfBudget(budget: ReachBudget, now: number): ReachFigures {
  const limit = (value: number | undefined) => (value === undefined || !Number.isFinite(value) ? null : value);
  return {
    depth: { used: 0, limit: limit(budget.depth) },
    tokens: { used: 0, limit: limit(budget.tokens) },
    costUsd: { used: 0, limit: limit(budget.costUsd) },
    memoryMb: { used: 0, limit: limit(budget.memoryMb) },
    zone: budget.zones === undefined ? "any" : budget.zones.join(" or "),
    elapsedMs: 0,
    remainingMs: budget.deadline === undefined ? null : Math.max(0, budget.deadline - now),
  };
}

function figuresOf(event: Extract<RunEvent, { type: "reach-status" }>): ReachFigures {
  const pair = (value: { used: number; limit: number }) => ({ used: value.used, limit: limitOf(value.limit) });
  return {
    depth: pair(event.depth),
    tokens: pair(event.tokens),
    costUsd: pair(event.costUsd),
    memoryMb: pair(event.memoryMb),
    zone: event.zone,
    elapsedMs: event.elapsedMs,
    remainingMs: Number.isFinite(event.remainingMs) ? event.remainingMs : null,
  };
}
