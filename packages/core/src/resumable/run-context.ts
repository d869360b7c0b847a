import { currentChain, type Frame } from "@rein/guard";
import type { SessionNode } from "@rein/session";
import type { SessionAppendOptions, SessionNodeWriter } from "@rein/session";
import type { SessionNodeUpdate } from "@rein/session";
import type { LeaseFence, RunLeaseStore, RunState } from "@rein/session";
import { LeaseLostError, SessionStoreBusyError } from "@rein/session";
import { SessionCursor } from "../scope/session-cursor";
import { RunPausedError, type RunPauseKind } from "./resumable-errors";

/** A step (or workflow) node saved by an earlier attempt of the run. @internal */
export interface SavedStep {
  readonly id: string;
  readonly name: string;
  readonly occurrence: number;
  readonly kind: "step" | "workflow";
  /** The arguments as JSON text, for comparison with a new call's. */
  readonly inputText: string;
  readonly status: unknown;
  readonly output: unknown;
  readonly isAsync: boolean;
  readonly external: boolean;
}

/** `name`, or `name #3` for its third occurrence. @internal */
export function stepLabel(name: string, occurrence: number): string {
  return occurrence === 0 ? name : `${name} #${occurrence + 1}`;
}

/**
 * The nodes of a run saved by earlier attempts, indexed for resume: the
 * steps below each node in `seq` order, and each node's last child (where
 * new nodes below it continue).
 * @internal
 */
export class SavedRun {
  private readonly steps = new Map<string, SavedStep[]>();
  private readonly lastChildren = new Map<string, string>();
  /** Every node below the run, by id. */
  readonly nodes = new Map<string, SessionNode>();

  constructor(runId: string, nodes: readonly SessionNode[]) {
    const below = new Map<string, SessionNode[]>();
    for (const node of nodes) {
      if (node.caller === null) continue;
      let list = below.get(node.caller);
      if (list === undefined) below.set(node.caller, (list = []));
      list.push(node);
    }
    const pending = [runId];
    while (pending.length > 0) {
      const id = pending.pop()!;
      const children = below.get(id);
      if (children === undefined) continue;
      children.sort((a, b) => a.seq - b.seq);
      this.lastChildren.set(id, children[children.length - 1]!.id);
      const steps: SavedStep[] = [];
      for (const child of children) {
        this.nodes.set(child.id, child);
        pending.push(child.id);
        const metadata = child.metadata;
        if (typeof metadata["step"] !== "string" || metadata["superseded"] === true) continue;
        steps.push({
          id: child.id,
          name: metadata["step"],
          occurrence: typeof metadata["occurrence"] === "number" ? metadata["occurrence"] : 0,
          kind: metadata["workflow"] === true ? "workflow" : "step",
          inputText: JSON.stringify(child.input ?? []),
          status: metadata["status"],
          output: metadata["void"] === true ? undefined : child.output,
          isAsync: metadata["async"] === true,
          external: metadata["external"] === true,
        });
      }
      if (steps.length > 0) this.steps.set(id, steps);
    }
  }

  /** The saved steps directly below `nodeId`, in the order they started. */
  stepsBelow(nodeId: string): readonly SavedStep[] {
    return this.steps.get(nodeId) ?? NO_STEPS;
  }

  /** The last node written below `nodeId`, or null. */
  lastChild(nodeId: string): string | null {
    return this.lastChildren.get(nodeId) ?? null;
  }

  /** The first external step that started and has no saved result. */
  unfinishedExternal(): SessionNode | undefined {
    for (const node of this.nodes.values()) {
      if (node.metadata["external"] === true && node.metadata["status"] !== "completed" && node.metadata["superseded"] !== true) return node;
    }
    return undefined;
  }
}

const NO_STEPS: readonly SavedStep[] = [];
const EMPTY_RUN = new SavedRun("", []);

/**
 * One attempt of a resumable run in this process: where it records, what
 * earlier attempts saved, and whether a pause was asked for.
 * @internal
 */
export class RunContext {
  /** Set by `agent.pause()`: the run pauses before its next step starts. */
  pauseRequested = false;
  /**
   * Set when this worker no longer holds the run's lease (a renewal was
   * refused: another worker took the run, or renewals failed for a whole
   * lease; or the store refused a write under the lease). No step starts
   * after that, and the attempt ends without writing.
   */
  leaseLost = false;
  /**
   * The options every append of the run's nodes is made with: the lease
   * fence, so the store refuses them once another worker claimed the run.
   * Undefined for a store that keeps no lease epochs.
   */
  readonly writeOptions: (SessionAppendOptions & { readonly fence: LeaseFence }) | undefined;
  /** Tool calls of this attempt waiting for a person's approval now. */
  pendingApprovals = 0;
  /** Finished steps given back from their saved results in this attempt. */
  replayed = 0;

  constructor(
    readonly runId: string,
    readonly name: string,
    readonly writer: SessionNodeWriter,
    readonly store: RunLeaseStore,
    /** The agent (or other `this`) whose method runs: `agent.pause()` reaches its runs. */
    readonly owner: unknown,
    readonly saved: SavedRun = EMPTY_RUN,
    /** The epoch of the lease this attempt holds (1 for a first attempt); undefined when the store keeps none. */
    epoch?: number,
  ) {
    this.writeOptions = epoch === undefined ? undefined : { fence: { runId, epoch } };
  }

  /**
   * The run's writes, each under its lease: one home for the fence, so no
   * write of a run can leave it out. A write the store refuses (the run was
   * claimed by another worker since) throws {@link LeaseLostError} from
   * {@link flush}, and marks the lease lost.
   */
  update(nodeId: string, fields: SessionNodeUpdate): void {
    this.writer.update(nodeId, fields, this.writeOptions);
  }

  /**
   * Commits the run's writes now; throws {@link LeaseLostError} when one
   * under its lease was refused. On a store with an asynchronous path
   * (`commitAsync`: the Postgres store's `asyncWrites`) this only starts the
   * commit; an asynchronous caller awaits {@link save} instead.
   */
  flush(): void {
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      try {
        this.writer.flush(this.writeOptions);
        return;
      } catch (error) {
        if (LeaseLostError.isInstance(error) && error.runId === this.runId) this.leaseLost = true;
        // Another process holds the database's write lock: a run's save point waits through it, as its lease
        // writes do, up to the store's busyTimeoutMs (the writer kept the batch; the next flush commits it).
        if (!SessionStoreBusyError.isInstance(error) || Date.now() - started >= busyTimeoutOf(this.store)) throw error;
        Atomics.wait(LOCK_PAUSE, 0, 0, Math.min(20, 2 ** attempt));
      }
    }
  }

  /**
   * A save point: the run's writes are stored when it returns (a synchronous
   * store: {@link flush}, and `undefined`) or when the promise it returns
   * resolves (a store with `commitAsync`: the commit runs on the store's pool
   * and the event loop goes on meanwhile). Throws, or rejects with,
   * {@link LeaseLostError} when a write under the run's lease was refused.
   */
  save(): Promise<void> | undefined {
    if (this.writer.store.commitAsync === undefined) {
      this.flush();
      return undefined;
    }
    return this.writer.flushAsync(this.writeOptions).catch((error: unknown) => {
      if (LeaseLostError.isInstance(error) && error.runId === this.runId) this.leaseLost = true;
      throw error;
    });
  }

  /** Renews the lease (on the store's `asyncLeases` when it has them); false when the store says another worker holds the run now. */
  renew(leaseMs: number): boolean | Promise<boolean> {
    return (this.store.asyncLeases ?? this.store).renewRun(this.runId, leaseMs, this.writeOptions?.fence.epoch);
  }

  /**
   * Gives the lease up with the run's new state; throws {@link LeaseLostError} (and marks the lease lost) when
   * another worker holds the run now. `awaited` (an async run) on a store with `asyncLeases`: on its pool, as a promise.
   */
  release(state: RunState, reason: string | null, awaited = false): Promise<void> | undefined {
    const lost = (error: unknown): never => {
      if (LeaseLostError.isInstance(error) && error.runId === this.runId) this.leaseLost = true;
      throw error;
    };
    const epoch = this.writeOptions?.fence.epoch;
    const leases = this.store.asyncLeases;
    if (awaited && leases !== undefined) return leases.releaseRun(this.runId, state, reason, epoch).catch(lost);
    try {
      this.store.releaseRun(this.runId, state, reason, epoch);
    } catch (error) {
      lost(error);
    }
    return undefined;
  }

  /** The error that stops the run and leaves it paused. */
  pause(kind: RunPauseKind, message: string, step?: string, cause?: unknown): RunPausedError {
    return new RunPausedError(this.runId, kind, message, step, cause === undefined ? undefined : { cause });
  }
}

/**
 * The steps of one node (the run, a workflow, a step, a parallel branch):
 * they take positions in call order and are matched against the saved ones
 * by position, name and occurrence.
 * @internal
 */
export class Sequence {
  /** The next saved position to match. */
  next = 0;
  private counts: Map<string, number> | undefined;
  readonly saved: readonly SavedStep[];
  readonly cursor: SessionCursor;

  constructor(
    readonly run: RunContext,
    readonly nodeId: string,
  ) {
    this.saved = run.saved.stepsBelow(nodeId);
    this.cursor = new SessionCursor(run.writer, nodeId, run.saved.lastChild(nodeId));
  }

  /** How many steps named `name` this sequence started before (and counts this one). */
  occurrence(name: string): number {
    const counts = (this.counts ??= new Map());
    const seen = counts.get(name) ?? 0;
    counts.set(name, seen + 1);
    return seen;
  }

  /** The first finished saved step no call reached: removed from the code. */
  missingFinished(): SavedStep | undefined {
    for (let index = this.next; index < this.saved.length; index++) {
      if (this.saved[index]!.status === "completed") return this.saved[index];
    }
    return undefined;
  }
}

/** Where a step call is: its run and the sequence it takes a position in. @internal */
export interface StepPlace {
  readonly run: RunContext;
  readonly sequence: Sequence;
}

/**
 * The place of each running run and step, by its guard frame (one frame
 * object per run attempt and per step call). Kept on the frames rather than
 * in an AsyncLocalStorage of its own: a second enabled AsyncLocalStorage
 * would make every promise of the process slower, resumable or not.
 */
const places = new WeakMap<Frame, StepPlace>();

/** A guard frame for a run or step at `place` (same key as `frame`: the guards count it as that function). @internal */
export function placeFrame(frame: Frame, place: StepPlace): Frame {
  const own: Frame = { key: frame.key, name: frame.name, ...(frame.kind === undefined ? {} : { kind: frame.kind }), ...(frame.zone === undefined ? {} : { zone: frame.zone }) };
  places.set(own, place);
  return own;
}

/** The run and sequence of the running code: the innermost run or step frame on the call chain, if any. @internal */
export function currentPlace(): StepPlace | undefined {
  const chain = currentChain();
  for (let index = chain.length - 1; index >= 0; index--) {
    const place = places.get(chain[index]!);
    if (place !== undefined) return place;
  }
  return undefined;
}

/** The runs of this process that are running now, by run id. @internal */
export const activeRuns = new Map<string, RunContext>();

/** What a blocked save point sleeps on between attempts (nothing ever notifies it). */
const LOCK_PAUSE = new Int32Array(new SharedArrayBuffer(4));

/** How long a store waits for another connection's lock: its `busyTimeoutMs`, else 5 s. */
function busyTimeoutOf(store: object): number {
  const timeout = (store as { busyTimeoutMs?: unknown }).busyTimeoutMs;
  return typeof timeout === "number" && timeout >= 0 ? timeout : 5_000;
}
