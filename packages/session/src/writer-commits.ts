import type { SessionCommitResult, SessionStoreLike } from "./session-store-like";
import { SessionStoreClosedError } from "./session-errors";
import type { SessionGraph } from "./session-graph";
import type { LeaseFence } from "./lease-fence";
import type { PendingEntry } from "./writer-registry";
import { withSeq } from "./node-update";
import { reportCommitFailure, type SessionCommitFailure } from "./commit-failure";
import { ProposedSeqs } from "./proposed-seqs";
import type { SessionWriteBatching } from "./session-node-writer-options";
import { addOperations, WriteQueue, type QueuedOperation } from "./write-queue";
import { KeptWrites } from "./kept-writes";
import { LeaseRefusals } from "./lease-refusals";
import { commitToStore, commitToStoreAsync } from "./recovering-commit";
import { HistoryWindow, topLevelOf, type WindowWriter } from "./history-window";

/** One commit's operations: the kept ones (when any), then the queue taken for it. */
interface Batch {
  readonly kept: KeptWrites | undefined;
  /** The queue taken for this commit. */
  readonly operations: QueuedOperation[];
  /** The kept operations, then {@link operations}: what the commit sends. */
  readonly all: QueuedOperation[];
}

/**
 * What a `SessionNodeWriter` has not stored yet, and how it gets there:
 * the queue, the operations kept from a failed commit, the commit in
 * flight on a store's asynchronous path, the pending head and the next
 * `seq` to propose — and the commits themselves, on the store's
 * synchronous path or its `commitAsync`, under one set of rules (see the
 * writer's class doc). The writer's methods check their arguments and
 * build what they queue; this does the rest.
 * @internal
 */
export class WriterCommits implements WindowWriter {
  /** The batch written since the last commit started. */
  readonly queue = new WriteQueue();
  /** Operations whose commit failed, kept (in order) for the retry; undefined while nothing failed. */
  kept: KeptWrites | undefined;
  /** The operations of the commit in flight, by id: not in the queue, not yet stored. */
  sending: Map<string, QueuedOperation> | undefined;
  /** The last top-level node appended and not yet committed. */
  pendingHead: string | undefined;
  /** The store's head as `readAhead` found it, for the next top-level call (taken once); undefined when none is read. */
  readHead: string | null | undefined;
  /** The `seq` the next append proposes. */
  nextSeq: number;
  /** The run leases commits were refused for. */
  readonly refusals = new LeaseRefusals();
  /** The history window, kept current by the writes. */
  readonly window: HistoryWindow;
  /** The commit in flight on the store's asynchronous path (see {@link startCommit}); settles, never rejects. */
  private committing: Promise<void> | undefined;
  /** How many commits in flight were abandoned ({@link commitPendingSync}): one that settles after is ignored. */
  private abandoned = 0;
  private scheduled = false;

  /**
   * Reads the session's last `seq` (throws `SessionNotFoundError` when it does not exist).
   * @param pendingWriters the writer's entry among the store's writers with a pending batch.
   * @param lastSeq the session's last `seq` when already read (`SessionNodeWriter.open`).
   */
  constructor(
    readonly store: SessionStoreLike,
    readonly sessionId: string,
    readonly batching: SessionWriteBatching,
    public onCommitError: ((failure: SessionCommitFailure) => void) | undefined,
    private readonly pendingWriters: PendingEntry,
    lastSeq?: number,
  ) {
    this.nextSeq = (lastSeq ?? store.getSession(sessionId).lastSeq) + 1;
    this.window = new HistoryWindow(store, sessionId, this);
  }

  /** How many operations wait for a commit (queued, or kept after a failed commit). */
  get pending(): number {
    return this.queue.length + (this.kept?.operations.length ?? 0);
  }

  /** The queued (or kept) operation of `id`; kept operations in flight are encoded already, so a later update is queued on its own. */
  find(id: string): QueuedOperation | undefined {
    const kept = this.sending === undefined ? this.kept?.get(id) : undefined;
    return kept ?? this.queue.find(id);
  }

  /** Adds the kept operations (or those in flight), then the queue, to `graph`. */
  addPending(graph: SessionGraph): void {
    if (this.sending !== undefined) addOperations(graph, [...this.sending.values()]);
    else if (this.kept !== undefined) addOperations(graph, this.kept.operations);
    addOperations(graph, this.queue.operations);
  }

  /** A node with this `seq` exists or is queued: the next proposal follows it. */
  sawSeq(seq: number): void {
    if (seq >= this.nextSeq) this.nextSeq = seq + 1;
  }

  /** Queues `operation` and commits it as `batching` says. */
  enqueue(operation: QueuedOperation): void {
    // Joins the store's pending writers once per batch, not once per write.
    if (this.queue.push(operation) === 1) this.pendingWriters.join();
    if (this.batching === "none") this.commitCall(operation.id);
    else this.schedule();
  }

  /** With `batching: "tick"`, commits from `setImmediate` (once per turn). */
  schedule(): void {
    if (this.batching !== "tick" || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      // Never throws: a failure is kept for the retry and reported once.
      this.commitPending();
    });
  }

  /** Throws the refusal of `fence`'s lease when a write under it was refused, else the error of the kept operations. */
  throwFailure(fence: LeaseFence | undefined): void {
    const refused = fence === undefined ? undefined : this.refusals.refusal(fence);
    if (refused !== undefined) throw refused;
    if (this.kept !== undefined) throw this.kept.error;
  }

  /** Commits everything pending; on a store's asynchronous path, waits until it (and what was written meanwhile) is stored. */
  async commitAll(): Promise<void> {
    if (this.store.commitAsync === undefined) return this.commitPending();
    await this.startCommit();
    while (this.committing !== undefined || this.queue.length > 0) await this.startCommit();
  }

  /** Commits, then throws when a node of the top-level call `nodeId` belongs to stays uncommitted. */
  commitCall(nodeId: string): void {
    this.commitPending();
    const kept = this.kept;
    if (kept === undefined) return;
    // The window holds the pending nodes; without one, they alone show their calls
    // (both chains end at the same node, known or not, when they share a call).
    const graph = this.window.windowOrPending();
    const call = topLevelOf(graph, nodeId);
    for (const operation of kept.operations) if (topLevelOf(graph, operation.id) === call) throw kept.error;
  }

  /** Commits, then throws when a node of `ids`, or one written inside them, stays uncommitted. */
  commitNodes(ids: ReadonlySet<string>): void {
    this.commitPending();
    const kept = this.kept;
    if (kept === undefined) return;
    const graph = this.window.windowOrPending();
    for (const operation of kept.operations) if (ids.has(topLevelOf(graph, operation.id))) throw kept.error;
  }

  /**
   * Commits what is pending and never throws: the kept operations (with
   * the queue, in one transaction, so order and head come out as written),
   * else the queue on its own. Operations that fail are kept, the failure
   * reported once. On a store's asynchronous path, starts the commit.
   */
  commitPending(): void {
    if (this.store.commitAsync !== undefined) {
      void this.startCommit();
      return;
    }
    this.commitOnSyncPath();
  }

  /**
   * {@link commitPending} on the store's synchronous path even when it has
   * `commitAsync`: for a store that is closing or a process that is exiting,
   * whose commits there will not finish. The store has abandoned the commit
   * in flight (see `flushPendingWritersSync`): its operations are kept, so
   * they go again, first, in one transaction with the queue, and its
   * settling, if it ever comes, changes nothing.
   */
  commitPendingSync(): void {
    const sending = this.sending;
    if (sending !== undefined) {
      this.abandoned++;
      this.sending = undefined;
      this.committing = undefined;
      // The kept operations in flight are kept already; the others join them, in the order written.
      const kept = this.kept;
      const others = [...sending.values()].filter((operation) => kept?.get(operation.id) !== operation);
      if (others.length > 0) {
        const keeping = (this.kept ??= new KeptWrites(new Error("the commit in flight was abandoned by the store")));
        keeping.add(others, keeping.error);
      }
    }
    this.commitOnSyncPath();
  }

  private commitOnSyncPath(): void {
    const batch = this.takeBatch();
    if (batch === undefined) return;
    let result: SessionCommitResult;
    try {
      result = commitToStore(this, batch.all);
    } catch (error) {
      if (this.batchFailed(batch, error)) {
        let alone: SessionCommitResult;
        try {
          alone = commitToStore(this, batch.operations);
        } catch (failure) {
          this.keep(batch.operations, failure); // plans the retry
          return;
        }
        this.committedAlone(batch, alone);
      }
      this.retryLater();
      return;
    }
    this.finish(batch, result);
  }

  /**
   * Starts a commit on the store's asynchronous path unless one is in
   * flight, and gives the one in flight: commits of this writer never
   * overlap, so the store sees them in the order written. Writes made
   * while it is in flight are committed by the next one, started when it
   * settles. Never rejects: a failure is kept, as by {@link commitPending}.
   */
  private startCommit(): Promise<void> {
    if (this.committing !== undefined) return this.committing;
    if (this.queue.length === 0 && this.kept === undefined) return Promise.resolve();
    const committing: Promise<void> = this.commitPendingAsync().finally(() => {
      if (this.committing !== committing) return; // abandoned
      this.sending = undefined;
      this.committing = undefined;
      if (this.queue.length > 0) void this.startCommit();
    });
    return (this.committing = committing);
  }

  /** {@link commitPending} on the store's asynchronous path: the same steps, each commit awaited. */
  private async commitPendingAsync(): Promise<void> {
    const batch = this.takeBatch();
    if (batch === undefined) return;
    this.sending = byId(batch.all);
    // Abandoned meanwhile (commitPendingSync): its operations went on the synchronous path.
    const abandoned = this.abandoned;
    let result: SessionCommitResult;
    try {
      result = await commitToStoreAsync(this, batch.all);
    } catch (error) {
      if (this.abandoned !== abandoned) return;
      if (this.batchFailed(batch, error)) {
        this.sending = byId(batch.operations);
        let alone: SessionCommitResult;
        try {
          alone = await commitToStoreAsync(this, batch.operations);
        } catch (failure) {
          if (this.abandoned !== abandoned) return;
          this.keep(batch.operations, failure); // plans the retry
          return;
        }
        if (this.abandoned !== abandoned) return;
        this.committedAlone(batch, alone);
      }
      this.retryLater();
      return;
    }
    if (this.abandoned !== abandoned) return;
    this.finish(batch, result);
  }

  /** Takes the queue for a commit, after the kept operations; undefined when nothing is pending. */
  private takeBatch(): Batch | undefined {
    const kept = this.kept;
    if (kept === undefined && this.queue.length === 0) return undefined;
    const operations = this.queue.take();
    const all = kept === undefined ? operations : operations.length === 0 ? kept.operations : kept.operations.concat(operations);
    return { kept, operations, all };
  }

  /**
   * The commit of `batch` failed with `error`: a batch without kept
   * operations is kept; else the kept ones keep failing, and this says
   * whether the queue is to be committed on its own (so a batch that keeps
   * failing never holds back later ones).
   */
  private batchFailed(batch: Batch, error: unknown): boolean {
    if (batch.kept === undefined) {
      this.keep(batch.operations, error);
      return false;
    }
    batch.kept.error = error;
    return batch.operations.length > 0;
  }

  /** The queue of `batch` was committed without its kept operations: its last top-level node stays the head. */
  private committedAlone(batch: Batch, result: SessionCommitResult): void {
    this.committed(batch.operations, result);
    const kept = batch.kept!;
    kept.supersede(batch.operations);
    const head = this.pendingHead;
    // A head still queued (written while the commit was in flight) stays pending.
    if (head !== undefined && !kept.has(head) && this.queue.find(head) === undefined) this.pendingHead = undefined;
  }

  /** `batch` was committed whole: nothing of it is kept any more. */
  private finish(batch: Batch, result: SessionCommitResult): void {
    const kept = batch.kept;
    if (kept !== undefined) {
      if (this.kept === kept) this.kept = undefined;
      kept.stopRetry();
    }
    this.committed(batch.all, result);
    // The kept nodes went in before a newer top-level node this writer committed meanwhile: it stays the head.
    if (kept?.supersededBy !== undefined && kept.headId !== undefined && this.store.head(this.sessionId) === kept.headId) {
      this.store.setHead(this.sessionId, kept.supersededBy);
    }
    if (this.queue.length === 0 && this.kept === undefined) {
      this.pendingHead = undefined;
      this.pendingWriters.leave();
    }
  }

  /** Keeps `operations` after a failed commit, reports the failure (once) and plans a retry. */
  private keep(operations: readonly QueuedOperation[], error: unknown): void {
    const first = this.kept === undefined;
    const kept = (this.kept ??= new KeptWrites(error));
    kept.add(operations, error);
    if (first) {
      const failure: SessionCommitFailure = {
        type: "commit-failed",
        sessionId: this.sessionId,
        location: this.store.location,
        error,
        pending: this.pending,
      };
      reportCommitFailure(failure, this.onCommitError);
    }
    this.retryLater();
  }

  /**
   * With `batching: "tick"`, retries the kept operations from a timer
   * (see {@link KeptWrites.retryLater}) so they are committed once the
   * fault clears, even if nothing else is written; a closed store is not
   * retried.
   */
  private retryLater(): void {
    const kept = this.kept;
    if (kept === undefined || this.batching !== "tick") return;
    if (SessionStoreClosedError.isInstance(kept.error)) return;
    kept.retryLater(() => {
      if (this.kept === kept) this.commitPending();
    });
  }

  /**
   * Takes in what a commit did: the `seq` the store gave each appended
   * node becomes the node's `seq` in the history window, and the next
   * proposal follows the highest.
   */
  private committed(operations: readonly QueuedOperation[], result: SessionCommitResult): void {
    // A head read ahead of this commit is older than what it stored.
    this.readHead = undefined;
    // Every node stored as proposed (the in-memory store says so by its result's class), or a store
    // written for the earlier interface, which returns nothing: the proposed seqs stand.
    if (result === undefined || result instanceof ProposedSeqs) return;
    const seqs = result.seqs;
    for (const operation of operations) {
      if (operation.kind !== "append") continue;
      const seq = seqs.get(operation.id);
      if (seq === undefined) continue;
      this.sawSeq(seq);
      if (seq === operation.node.seq) continue;
      const node = this.window.get(operation.id);
      if (node !== undefined) this.window.replace(withSeq(node, seq));
    }
  }
}

/** `operations` by id. */
function byId(operations: readonly QueuedOperation[]): Map<string, QueuedOperation> {
  return new Map(operations.map((operation) => [operation.id, operation]));
}
