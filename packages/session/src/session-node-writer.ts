import type { SessionNode, SessionNodeRole } from "./session-node";
import type { SessionCommitResult, SessionNodeUpdate, SessionStoreLike } from "./session-store-like";
import { SessionGraph } from "./session-graph";
import { LeaseLostError, SessionNodeConflictError, SessionNodeNotFoundError, SessionStoreClosedError } from "./session-errors";
import type { LeaseFence } from "./run-leases";
import { pendingEntry, registerSharedWriter, sharedWriter, type PendingEntry } from "./writer-registry";
import { snapshotChanges, snapshotValue, type NodeJson, type QueuedAppend } from "./node-json";
import { applyUpdate, mergeUpdate, withSeq } from "./node-update";
import { reportCommitFailure, type SessionCommitFailure } from "./commit-failure";
import { ProposedSeqs } from "./proposed-seqs";
import { checkNodeId } from "./session-arguments";
import { checkWriterArguments, type SessionNodeWriterOptions, type SessionWriteBatching } from "./session-node-writer-options";

/**
 * A node as handed to {@link SessionNodeWriter.append}: `seq` and `createdAt` are filled in when missing.
 * @example
 * ```ts
 * const input: SessionNodeInput = { id: "l1", role: "llm", name: "model-a", caller: "c1", output: blocks };
 * ```
 */
export interface SessionNodeInput {
  id: string;
  role: SessionNodeRole;
  name: string;
  /**
   * A proposal: the store allocates `seq` when it commits the node (the
   * proposal stands when it is above every `seq` already in the session).
   * @default the next seq of the session, as this writer knows it
   */
  seq?: number;
  /** @default Date.now() */
  createdAt?: number;
  /** @default undefined */
  input?: unknown;
  /** @default undefined */
  output?: unknown;
  /** @default null */
  caller?: string | null;
  /** @default null */
  predecessor?: string | null;
  /** @default {} */
  metadata?: Readonly<Record<string, unknown>>;
}

/**
 * When a writer commits: `"tick"` batches everything written in one event
 * loop turn into one transaction (committed from `setImmediate`); `"manual"`
 * commits only on `flush()`; `"none"` commits every write synchronously.
 * @default "tick"
 */
/** Options of {@link SessionNodeWriter.append}. */
export interface SessionAppendOptions {
  /**
   * The caller hands the values over: `input`, `output` and `metadata` are
   * plain JSON data that nobody mutates afterwards. The writer then keeps
   * them without a snapshot (no copy now; a file store serialises them on
   * commit). The runtime uses it for model turns.
   * @default false
   */
  owned?: boolean;
  /**
   * The run lease the node is written under: every commit that holds it
   * carries the fence, and the store refuses the commit when the run's
   * lease has moved to another epoch. The writer then drops the
   * operations of that lease (they are never stored) and commits the
   * rest; `flush({ fence })` throws the {@link LeaseLostError}. Resumable
   * runs fence their step and run nodes this way.
   * @default none
   */
  fence?: LeaseFence;
}

/**
 * Options of {@link SessionNodeWriter.update}.
 * @example
 * ```ts
 * writer.update(stepId, { output: result, metadata: { status: "completed" } }, { fence: { runId, epoch } });
 * ```
 */
export interface SessionUpdateOptions {
  /** The run lease the update is made under (see {@link SessionAppendOptions.fence}). @default none */
  fence?: LeaseFence;
}

/**
 * Options of {@link SessionNodeWriter.flush}.
 * @example
 * ```ts
 * writer.flush({ fence: { runId, epoch } }); // throws LeaseLostError when a write under that lease was refused
 * ```
 */
export interface SessionFlushOptions {
  /**
   * Also throw the {@link LeaseLostError} when a write made under this
   * fence was refused, by this commit or an earlier one.
   * @default none
   */
  fence?: LeaseFence;
}

/**
 * Writes the nodes of one session into a store. Appends and updates are
 * queued and committed together in one transaction per event-loop turn, so
 * a scoped call never waits for a synchronous commit; `flush()` commits
 * the queue now (the runtime commits at the end of every model request and
 * top-level call, so nothing acknowledged to the user is lost). Values are
 * snapshotted as JSON when written.
 *
 * **One writer per session in a process.** `new SessionNodeWriter(store,
 * sessionId)` returns the session's writer when one is in use (by any
 * Context, or held anywhere), so every Context on the session shares its
 * queue, head and graph; writers are held weakly and made again once
 * unused. Pass `{ shared: false }` for a writer of its own.
 *
 * **Commit failures are kept.** A failed commit's operations are kept and
 * retried with the next commit (and from a timer with `batching: "tick"`);
 * the failure is reported once (`onCommitError`, and the
 * {@link SESSION_COMMIT_FAILED_CHANNEL} diagnostics channel). Writes made
 * after it are committed on their own, so a batch that keeps failing never
 * holds back later ones.
 *
 * A node with `metadata.expose === "hidden"` is never stored.
 *
 * @example
 * ```ts
 * const writer = new SessionNodeWriter(store, "s1");
 * writer.append({ id: "c1", role: "code", name: "Researcher.research", metadata: { status: "running" } });
 * writer.update("c1", { output: "done", metadata: { status: "completed" } });
 * writer.flush();
 * ```
 */
export class SessionNodeWriter {
  // Fields set by the constructor carry `!`: it may return the session's writer in use instead (see there).
  /** The store written to. */
  readonly store!: SessionStoreLike;
  /** The session written to. */
  readonly sessionId!: string;
  private readonly batching!: SessionWriteBatching;
  private onCommitError: ((failure: SessionCommitFailure) => void) | undefined;
  /**
   * The batch: at most one operation per id (a later update folds into
   * it). The writer remembers no id beyond it: a committed id is the
   * store's (or the live graph's) to know, so the writer's memory is
   * bounded by one batch.
   */
  private queue: QueuedOperation[] = [];
  /** The batch by id, made once it outgrows a scan (see {@link queuedOperation}); dropped on commit. */
  private queueIndex: Map<string, QueuedOperation> | undefined;
  /**
   * Operations whose commit failed, kept (in order) for the retry; undefined
   * while nothing failed. Updates of their ids fold into them, as into the
   * queue.
   */
  private kept: Kept | undefined;
  /** This writer's place among the store's writers with a pending batch. */
  private readonly pendingWriters!: PendingEntry;
  private pendingHead: string | undefined;
  private nextSeq!: number;
  private scheduled = false;
  /**
   * The history window: the nodes history for this writer's requests draws
   * on, read along the head's ancestry ({@link SessionStoreLike.readAncestry})
   * and kept current by this writer's own writes, so selecting history for
   * each model request costs no database read. A bounded cache: read again
   * once it has grown past {@link windowLimit}, or when a call starts after
   * a node it lacks (written elsewhere).
   */
  private live: SessionGraph | undefined;
  /** The size past which {@link live} is read again: twice what the last read held, and at least {@link WINDOW_NODES}. */
  private windowLimit = WINDOW_NODES;
  /** How many turns back {@link live} was read (it holds those and every turn written since). */
  private windowTurns = Infinity;
  /** The refusal of each run lease a commit was refused for, by run id: writes under it are dropped. */
  private lost: Map<string, LeaseLostError> | undefined;
  /** The commit in flight on the store's asynchronous path (see {@link flushAsync}); settles, never rejects. */
  private committing: Promise<void> | undefined;
  /** The operations of the commit in flight, by id: not in the queue, not yet stored. */
  private sending: Map<string, QueuedOperation> | undefined;

  /**
   * @param store where to write; the session must exist (throws {@link SessionNotFoundError}).
   * @param sessionId the session to write to.
   * @returns the session's writer in this process when it has one (see {@link SessionNodeWriterOptions.shared});
   *   a `TypeError` when that writer was made with another `batching` or `onCommitError`.
   */
  constructor(store: SessionStoreLike, sessionId: string, options: SessionNodeWriterOptions = {}) {
    checkWriterArguments(store, sessionId, options);
    const shared = options.shared ?? true;
    if (shared) {
      const existing = sharedWriter<SessionNodeWriter>(store, sessionId);
      if (existing !== undefined) {
        existing.accept(options);
        // One writer per (store, session): `new` hands out the one in use (see the class doc).
        return existing;
      }
    }
    this.store = store;
    this.sessionId = sessionId;
    this.batching = options.batching ?? "tick";
    this.onCommitError = options.onCommitError;
    this.nextSeq = store.getSession(sessionId).lastSeq + 1;
    this.pendingWriters = pendingEntry(store, this);
    if (shared) registerSharedWriter(store, sessionId, this);
  }

  /** How many operations wait for a commit (queued, or kept after a failed commit). */
  get pending(): number {
    return this.queue.length + (this.kept?.operations.length ?? 0);
  }

  /**
   * The session head including queued writes: the last top-level node
   * appended through this writer and not yet committed, or the store's
   * head (which another writer or process may have moved).
   */
  get head(): string | null {
    return this.pendingHead ?? this.store.head(this.sessionId);
  }

  /**
   * Queues a node. Idempotent on id: appending an id that is queued or
   * stored writes nothing and the first version stays (an id the store
   * holds is looked up there, or in the live graph once loaded). Returns
   * the node as it will be stored, with the `seq` this writer proposes
   * (the store allocates the final one on commit; {@link graph} carries it).
   * Throws a `TypeError` when `input`, `output` or `metadata` is not JSON.
   */
  append(node: SessionNodeInput, options?: SessionAppendOptions): SessionNode {
    checkNodeId("SessionNodeWriter.append", node?.id);
    const id = node.id;
    const knownSeq = this.seqOf(id);
    const seq = knownSeq ?? node.seq ?? this.nextSeq;
    // Made first: it keeps the JSON text a snapshot makes, for a store that writes text.
    const fence = options?.fence;
    const operation: QueuedAppend = { kind: "append", id, node: UNSET, json: undefined, fence };
    let stored: SessionNode;
    if (options?.owned === true) {
      // Handed over: plain JSON data nobody mutates later. Kept as is; stores serialise on commit.
      stored = {
        id,
        seq,
        createdAt: node.createdAt ?? Date.now(),
        role: node.role,
        name: node.name,
        input: node.input,
        output: node.output,
        caller: node.caller ?? null,
        predecessor: node.predecessor ?? null,
        metadata: node.metadata ?? {},
      };
    } else {
      stored = {
        id,
        seq,
        createdAt: node.createdAt ?? Date.now(),
        role: node.role,
        name: node.name,
        input: snapshotValue(node.input, id, "input", operation),
        output: snapshotValue(node.output, id, "output", operation),
        caller: node.caller ?? null,
        predecessor: node.predecessor ?? null,
        metadata: (snapshotValue(node.metadata ?? {}, id, "metadata", operation) ?? {}) as Record<string, unknown>,
      };
    }
    if (knownSeq !== undefined || stored.metadata["expose"] === "hidden") return stored;
    // Under a lease already refused: never stored, so never queued.
    if (fence !== undefined && this.refusal(fence) !== undefined) return stored;
    if (seq >= this.nextSeq) this.nextSeq = seq + 1;
    if (stored.caller === null) this.pendingHead = id;
    this.live?.add(stored);
    operation.node = stored;
    this.enqueue(operation);
    return stored;
  }

  /**
   * Queues an update: `metadata` is merged shallowly (a key set to
   * `undefined` is removed), other given fields replace the stored ones.
   * Throws {@link SessionNodeNotFoundError} when the node is neither queued
   * nor stored. An update under a lease already refused is dropped.
   */
  update(id: string, fields: SessionNodeUpdate, options?: SessionUpdateOptions): void {
    checkNodeId("SessionNodeWriter.update", id);
    const fence = options?.fence;
    if (fence !== undefined && this.refusal(fence) !== undefined) return;
    const changes: SessionNodeUpdate = {};
    if (fields.name !== undefined) changes.name = fields.name;
    if ("input" in fields) changes.input = snapshotValue(fields.input, id, "input");
    if ("output" in fields) changes.output = snapshotValue(fields.output, id, "output");
    if (fields.metadata !== undefined) changes.metadata = snapshotChanges(fields.metadata, id);
    const operation = this.queuedOperation(id);
    const queuedNode = operation?.kind === "append" ? operation.node : undefined;
    // An update of a queued append folds into it: the node is stored once, already updated.
    const folded = queuedNode === undefined ? undefined : applyUpdate(queuedNode, changes);
    const live = this.live?.get(id);
    // The live graph usually holds the queued node itself, and then takes the same updated node.
    if (live !== undefined) this.live!.replace(live === queuedNode ? folded! : applyUpdate(live, changes));
    if (operation?.kind === "append") {
      operation.node = folded!;
      if (operation.json !== undefined) dropReplacedText(operation.json, changes);
      if (fence !== undefined) operation.fence = fence;
      this.schedule();
      return;
    }
    if (operation !== undefined) {
      operation.fields = mergeUpdate(operation.fields, changes);
      if (fence !== undefined) operation.fence = fence;
      this.schedule();
      return;
    }
    if (live === undefined && this.sending?.has(id) !== true && !this.store.hasNode(this.sessionId, id)) {
      throw new SessionNodeNotFoundError(this.sessionId, id, this.store.location);
    }
    this.enqueue({ kind: "update", id, fields: changes, fence });
  }

  /**
   * Commits everything this writer holds, now: the operations kept from a
   * failed commit, then the queue. Throws the storage error when anything
   * stays uncommitted (it is kept, and a later flush retries it). With
   * `fence`, first throws the {@link LeaseLostError} when a write under that
   * run lease was refused (now or by an earlier commit): those writes were
   * dropped, never stored.
   */
  flush(options?: SessionFlushOptions): void {
    // On a store's asynchronous path this starts the commit: await flushAsync() for a durable point.
    this.commitPending();
    const refused = options?.fence === undefined ? undefined : this.refusal(options.fence);
    if (refused !== undefined) throw refused;
    if (this.kept !== undefined) throw this.kept.error;
  }

  /**
   * {@link flush}, awaited: on a store with `commitAsync` (the Postgres
   * store's `asyncWrites`), commits everything queued — after the commit in
   * flight, and again for what was written meanwhile — without blocking the
   * event loop, and resolves once it is stored; throws as `flush` does. On a
   * synchronous store, the same as `flush`.
   *
   * @example
   * ```ts
   * await writer.flushAsync({ fence: { runId, epoch } }); // the step's save point
   * ```
   */
  async flushAsync(options?: SessionFlushOptions): Promise<void> {
    if (this.store.commitAsync !== undefined) {
      await this.startCommit();
      while (this.committing !== undefined || this.queue.length > 0) await this.startCommit();
    } else this.commitPending();
    const refused = options?.fence === undefined ? undefined : this.refusal(options.fence);
    if (refused !== undefined) throw refused;
    if (this.kept !== undefined) throw this.kept.error;
  }

  /**
   * Commits like {@link flush}, but throws only when a node of the
   * top-level call that `nodeId` belongs to stays uncommitted: operations
   * of another call that keep failing are retried, not blamed on this one.
   * The runtime commits with it after each model request and when a
   * top-level call returns.
   * @internal
   */
  flushCall(nodeId: string): void {
    this.commitPending();
    const kept = this.kept;
    if (kept !== undefined && this.keptHoldsCallOf(nodeId)) throw kept.error;
  }

  /**
   * Commits like {@link flushCall}, for a top-level run whose nodes are
   * each top-level (`agent.ask()` outside any call): throws when a node of
   * `ids`, or one written inside them, stays uncommitted.
   * @internal
   */
  flushNodes(ids: ReadonlySet<string>): void {
    this.commitPending();
    const kept = this.kept;
    if (kept === undefined) return;
    let graph = this.live;
    if (graph === undefined) this.addPending((graph = new SessionGraph()));
    for (const operation of kept.operations) if (ids.has(topLevelOf(graph, operation.id))) throw kept.error;
  }

  /**
   * Commits the queue and reads the whole session into a
   * {@link SessionGraph}.
   */
  load(): SessionGraph {
    this.flush();
    return new SessionGraph(this.store.readNodes(this.sessionId));
  }

  /**
   * The whole session as a graph, read now: the committed nodes, then this
   * writer's pending writes (nothing is committed to build it). History
   * never needs it: each model request draws on the writer's history
   * window, read along the head's ancestry. Use {@link load} to commit
   * first.
   */
  graph(): SessionGraph {
    const graph = new SessionGraph(this.store.readNodes(this.sessionId));
    this.addPending(graph);
    return graph;
  }

  /**
   * The graph history for a request at `headId`, made in call `callId`, is
   * selected from: the writer's history window, which holds the ancestry
   * of `headId` (read along it from the store when the window lacks it or
   * has outgrown its bound; with the call's `renderRange.turns`, only those
   * turns are read).
   * @internal
   */
  historyGraph(headId: string, callId: string | null): SessionGraph {
    const live = this.live;
    if (live !== undefined && live.size <= this.windowLimit && live.has(headId)) {
      // A window read for fewer turns than this call shows cannot serve it.
      if (this.windowTurns === Infinity || this.turnsOf(callId, live) <= this.windowTurns) return live;
    }
    return this.readWindow(headId, callId);
  }

  /**
   * A top-level call is about to start after `nodeId`: when the history
   * window lacks that node, another writer wrote it, and the window is read
   * again on next use.
   * @internal
   */
  catchUp(nodeId: string | null): void {
    if (nodeId !== null && this.live !== undefined && !this.live.has(nodeId)) this.live = undefined;
  }

  /** True when a node with this id is queued, kept or stored. */
  has(id: string): boolean {
    return this.queuedOperation(id) !== undefined || this.sending?.has(id) === true || this.live?.has(id) === true || this.store.hasNode(this.sessionId, id);
  }

  /**
   * Takes the options of another `new SessionNodeWriter` for this session
   * (which returns this writer): a different `batching` or handler is a
   * misuse, since both callers would rely on theirs.
   */
  private accept(options: SessionNodeWriterOptions): void {
    if (options.batching !== undefined && options.batching !== this.batching) {
      throw new TypeError(
        `Session '${this.sessionId}' (${this.store.location}) already has a writer in this process with batching "${this.batching}", ` +
          `so new SessionNodeWriter(store, '${this.sessionId}', { batching: "${options.batching}" }) cannot return it: ` +
          `use one batching per session, or pass { shared: false } for a writer of its own`,
      );
    }
    const handler = options.onCommitError;
    if (handler === undefined || handler === this.onCommitError) return;
    if (this.onCommitError !== undefined) {
      throw new TypeError(
        `Session '${this.sessionId}' (${this.store.location}) already has a writer in this process with another onCommitError: ` +
          `share that writer, or pass { shared: false } for a writer of its own`,
      );
    }
    this.onCommitError = handler;
  }

  /**
   * Commits what is pending and never throws: the kept operations (with
   * the queue, in one transaction, so order and head come out as written),
   * else the queue on its own. Operations that fail are kept, the failure
   * reported once.
   */
  private commitPending(): void {
    if (this.store.commitAsync !== undefined) {
      void this.startCommit();
      return;
    }
    const operations = this.queue;
    const kept = this.kept;
    if (kept === undefined) {
      if (operations.length === 0) return;
      this.takeQueue();
      if (!this.commitOrKeep(operations)) return;
      this.pendingHead = undefined;
      if (this.queue.length === 0) this.pendingWriters.leave();
      return;
    }
    this.takeQueue();
    const all = operations.length === 0 ? kept.operations : kept.operations.concat(operations);
    let result: SessionCommitResult;
    try {
      result = this.commitToStore(all);
    } catch (error) {
      kept.error = error;
      if (operations.length > 0) this.commitAlone(operations);
      this.retryLater();
      return;
    }
    this.kept = undefined;
    if (kept.timer !== undefined) clearTimeout(kept.timer);
    this.committed(all, result);
    // The kept nodes went in before a newer top-level node this writer committed meanwhile: it stays the head.
    if (kept.supersededBy !== undefined && kept.headId !== undefined && this.store.head(this.sessionId) === kept.headId) {
      this.store.setHead(this.sessionId, kept.supersededBy);
    }
    if (this.queue.length === 0) {
      this.pendingHead = undefined;
      this.pendingWriters.leave();
    }
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
      this.sending = undefined;
      this.committing = undefined;
      if (this.queue.length > 0) void this.startCommit();
    });
    return (this.committing = committing);
  }

  /** {@link commitPending} on the store's asynchronous path: the same steps, the commit awaited. */
  private async commitPendingAsync(): Promise<void> {
    const operations = this.queue;
    const kept = this.kept;
    if (kept === undefined && operations.length === 0) return;
    this.takeQueue();
    const all = kept === undefined ? operations : operations.length === 0 ? kept.operations : kept.operations.concat(operations);
    this.sending = new Map(all.map((operation) => [operation.id, operation]));
    let result: SessionCommitResult;
    try {
      result = await this.commitToStoreAsync(all);
    } catch (error) {
      if (kept === undefined) {
        this.keep(operations, error);
        return;
      }
      kept.error = error;
      // The kept ones keep failing: the queue is committed on its own, as the sync path does.
      if (operations.length > 0) {
        this.sending = new Map(operations.map((operation) => [operation.id, operation]));
        try {
          this.committed(operations, await this.commitToStoreAsync(operations));
          for (const operation of operations) if (operation.kind === "append" && operation.node.caller === null) kept.supersededBy = operation.id;
        } catch (alone) {
          this.keep(operations, alone);
        }
      }
      this.retryLater();
      return;
    }
    if (kept !== undefined) {
      if (this.kept === kept) this.kept = undefined;
      if (kept.timer !== undefined) clearTimeout(kept.timer);
    }
    this.committed(all, result);
    if (kept?.supersededBy !== undefined && kept.headId !== undefined && this.store.head(this.sessionId) === kept.headId) {
      this.store.setHead(this.sessionId, kept.supersededBy);
    }
    if (this.queue.length === 0 && this.kept === undefined) {
      this.pendingHead = undefined;
      this.pendingWriters.leave();
    }
  }

  /** Commits `operations` in one transaction; on failure keeps them for a retry (reported once). True when committed. */
  private commitOrKeep(operations: QueuedOperation[]): boolean {
    let result: SessionCommitResult;
    try {
      result = this.commitToStore(operations);
    } catch (error) {
      this.keep(operations, error);
      return false;
    }
    this.committed(operations, result);
    return true;
  }

  /** Commits the queue without the kept operations, which keep failing. */
  private commitAlone(operations: QueuedOperation[]): void {
    if (!this.commitOrKeep(operations)) return;
    const kept = this.kept!;
    for (const operation of operations) {
      if (operation.kind === "append" && operation.node.caller === null) kept.supersededBy = operation.id;
    }
    if (this.pendingHead !== undefined && !kept.index.has(this.pendingHead)) this.pendingHead = undefined;
  }

  /** Starts a new queue; the old one is being committed. */
  private takeQueue(): void {
    this.queue = [];
    this.queueIndex = undefined;
  }

  /** Keeps `operations` after a failed commit, reports the failure (once) and plans a retry. */
  private keep(operations: QueuedOperation[], error: unknown): void {
    let kept = this.kept;
    const first = kept === undefined;
    if (kept === undefined) kept = this.kept = { operations: [], index: new Map(), error, supersededBy: undefined, headId: undefined };
    kept.error = error;
    for (const operation of operations) {
      kept.operations.push(operation);
      kept.index.set(operation.id, operation);
      if (operation.kind === "append" && operation.node.caller === null) kept.headId = operation.id;
    }
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
   * (10 ms, doubling up to 5 s) so they are committed once the fault
   * clears, even if nothing else is written. The timer does not keep the
   * process alive; a closed store is not retried.
   */
  private retryLater(): void {
    const kept = this.kept;
    if (kept === undefined || this.batching !== "tick" || kept.timer !== undefined) return;
    if (SessionStoreClosedError.isInstance(kept.error)) return;
    kept.delay = Math.min((kept.delay ?? 5) * 2, 5_000);
    kept.timer = setTimeout(() => {
      kept.timer = undefined;
      if (this.kept === kept) this.commitPending();
    }, kept.delay);
    kept.timer.unref?.();
  }

  /**
   * Takes in what a commit did: the `seq` the store gave each appended
   * node becomes the node's `seq` in the live graph, and the next proposal
   * follows the highest.
   */
  private committed(operations: readonly QueuedOperation[], result: SessionCommitResult): void {
    // Every node stored as proposed (the in-memory store says so by its result's class), or a store
    // written for the earlier interface, which returns nothing: the proposed seqs stand.
    if (result === undefined || result instanceof ProposedSeqs) return;
    const seqs = result.seqs;
    for (const operation of operations) {
      if (operation.kind !== "append") continue;
      const seq = seqs.get(operation.id);
      if (seq === undefined) continue;
      if (seq >= this.nextSeq) this.nextSeq = seq + 1;
      if (seq === operation.node.seq) continue;
      const node = this.live?.get(operation.id);
      if (node !== undefined) this.live!.replace(withSeq(node, seq));
    }
  }

  /** Whether a kept operation belongs to the top-level call that `nodeId` belongs to. */
  private keptHoldsCallOf(nodeId: string): boolean {
    // The window holds the pending nodes; without one, they alone show their calls
    // (both chains end at the same node, known or not, when they share a call).
    let graph = this.live;
    if (graph === undefined) this.addPending((graph = new SessionGraph()));
    const call = topLevelOf(graph, nodeId);
    for (const operation of this.kept!.operations) if (topLevelOf(graph, operation.id) === call) return true;
    return false;
  }

  /**
   * The seq of a node queued, kept or in the history window under `id`, or
   * undefined for an id this writer does not know. An id the store holds
   * outside the window is not looked up here (a round trip per append): its
   * append is dropped when the commit finds the id taken (see
   * {@link commitToStore}), so the first version stays all the same.
   */
  private seqOf(id: string): number | undefined {
    const operation = this.queuedOperation(id) ?? this.sending?.get(id);
    if (operation?.kind === "append") return operation.node.seq;
    return this.live?.get(id)?.seq;
  }

  /**
   * Commits `operations`, with the fences of those written under a run
   * lease. An append whose id the store already holds (a node appended
   * again, from this writer or another process) is dropped and the rest
   * committed: the first version stays, as `append` promises. A refused
   * lease drops every operation written under it, and the rest is
   * committed. Removes the dropped operations from `operations`, in place.
   */
  private commitToStore(operations: QueuedOperation[]): SessionCommitResult {
    for (;;) {
      try {
        const fences = fencesOf(operations);
        return fences === undefined ? this.store.commit(this.sessionId, operations) : this.store.commit(this.sessionId, operations, { fences });
      } catch (error) {
        if (!this.recover(operations, error)) return { seqs: new Map() };
      }
    }
  }

  /** {@link commitToStore} on the store's asynchronous path (`commitAsync`). */
  private async commitToStoreAsync(operations: QueuedOperation[]): Promise<SessionCommitResult> {
    for (;;) {
      try {
        const fences = fencesOf(operations);
        return await this.store.commitAsync!(this.sessionId, operations, fences === undefined ? undefined : { fences });
      } catch (error) {
        if (!this.recover(operations, error)) return { seqs: new Map() };
      }
    }
  }

  /**
   * After a refused commit of `operations`: drops the operations of a
   * refused lease, or the append of an id the store holds, and says whether
   * any are left to commit again; rethrows any other error.
   */
  private recover(operations: QueuedOperation[], error: unknown): boolean {
    if (LeaseLostError.isInstance(error)) {
      if (!this.dropRefused(operations, error)) throw error;
      return operations.length > 0;
    }
    const taken = SessionNodeConflictError.isInstance(error) ? error.nodeId : undefined;
    const index = taken === undefined ? -1 : operations.findIndex((operation) => operation.kind === "append" && operation.id === taken);
    if (index < 0) throw error;
    operations.splice(index, 1);
    this.kept?.index.delete(taken!);
    // The window took the version appended again: read it again, with the stored one.
    if (this.live?.has(taken!) === true) this.live = undefined;
    return operations.length > 0;
  }

  /** The refusal of `fence`'s lease, when a commit was refused for it. */
  private refusal(fence: LeaseFence): LeaseLostError | undefined {
    const refused = this.lost?.get(fence.runId);
    return refused !== undefined && refused.heldEpoch === fence.epoch ? refused : undefined;
  }

  /**
   * Drops, from `operations` and from the kept ones, every operation
   * written under the refused lease, and remembers the refusal (later
   * writes under it are dropped when made). False when none was found.
   */
  private dropRefused(operations: QueuedOperation[], refused: LeaseLostError): boolean {
    const head = this.pendingHead;
    let droppedHead = false;
    const under = (operation: QueuedOperation): boolean => {
      const dropped = operation.fence?.runId === refused.runId && operation.fence.epoch === refused.heldEpoch;
      if (dropped && operation.id === head) droppedHead = true;
      return dropped;
    };
    const before = operations.length;
    removeWhere(operations, under);
    if (operations.length === before) return false;
    (this.lost ??= new Map()).set(refused.runId, refused);
    const kept = this.kept;
    if (kept !== undefined) {
      for (const operation of kept.operations) if (under(operation)) kept.index.delete(operation.id);
      removeWhere(kept.operations, under);
    }
    if (droppedHead) this.pendingHead = undefined;
    // The window holds the refused versions: read it again, with the stored ones.
    this.live = undefined;
    return true;
  }

  /**
   * Reads the history window for `headId`: its pending ancestors are here,
   * the committed ones are read along the ancestry of each committed node
   * they lead to (usually one: the previous turn). Nothing is committed, so
   * a manual writer never commits behind its user's back.
   */
  private readWindow(headId: string, callId: string | null): SessionGraph {
    const pending = new SessionGraph();
    this.addPending(pending);
    const turns = this.turnsOf(callId, pending);
    const roots = new Set<string>();
    const seen = new Set<string>();
    for (const stack = [headId]; stack.length > 0; ) {
      const id = stack.pop()!;
      if (seen.has(id)) continue;
      seen.add(id);
      const node = pending.get(id);
      if (node === undefined) roots.add(id);
      else {
        if (node.caller !== null) stack.push(node.caller);
        if (node.predecessor !== null) stack.push(node.predecessor);
      }
    }
    const graph = new SessionGraph();
    for (const root of roots) for (const node of this.readAncestry(root, turns)) graph.add(node);
    this.addPending(graph);
    const last = graph.all().at(-1);
    if (last !== undefined && last.seq >= this.nextSeq) this.nextSeq = last.seq + 1;
    this.windowLimit = Math.max(WINDOW_NODES, 2 * graph.size);
    this.windowTurns = turns;
    return (this.live = graph);
  }

  /** The `renderRange.turns` of call `callId` (found in `graph`, or read), else Infinity. */
  private turnsOf(callId: string | null, graph: SessionGraph): number {
    if (callId === null) return Infinity;
    const call = graph.get(callId) ?? this.readAncestry(callId, 1).find((node) => node.id === callId);
    const range = call?.metadata["renderRange"] as { turns?: unknown } | undefined;
    const turns = range?.turns;
    return typeof turns === "number" && turns >= 1 ? turns : Infinity;
  }

  /** The store's ancestry of `nodeId` (the whole session from a store without `readAncestry`). */
  private readAncestry(nodeId: string, turns: number): SessionNode[] {
    if (typeof this.store.readAncestry !== "function") return this.store.readNodes(this.sessionId);
    return this.store.readAncestry(this.sessionId, nodeId, turns === Infinity ? undefined : { turns });
  }

  /** Adds the kept operations, then the queue, to `graph`. */
  private addPending(graph: SessionGraph): void {
    if (this.sending !== undefined) addOperations(graph, [...this.sending.values()]);
    else if (this.kept !== undefined) addOperations(graph, this.kept.operations);
    addOperations(graph, this.queue);
  }

  /**
   * The queued (or kept) operation of `id`. A batch is usually a handful of
   * operations (the runtime commits after every model request), and a scan
   * from the end costs less than keeping a map per batch; a batch past
   * {@link SCAN_LIMIT} gets an index, so a large one stays linear.
   */
  private queuedOperation(id: string): QueuedOperation | undefined {
    // Kept operations in flight are encoded already: a later update is queued on its own.
    const kept = this.sending === undefined ? this.kept?.index.get(id) : undefined;
    if (kept !== undefined) return kept;
    if (this.queueIndex !== undefined) return this.queueIndex.get(id);
    const queue = this.queue;
    for (let index = queue.length - 1; index >= 0; index--) if (queue[index]!.id === id) return queue[index];
    return undefined;
  }

  private enqueue(operation: QueuedOperation): void {
    const length = this.queue.push(operation);
    // Joins the store's pending writers once per batch, not once per write.
    if (length === 1) this.pendingWriters.join();
    if (this.queueIndex !== undefined) this.queueIndex.set(operation.id, operation);
    else if (length > SCAN_LIMIT) this.queueIndex = new Map(this.queue.map((queued) => [queued.id, queued]));
    if (this.batching === "none") this.flushCall(operation.id);
    else this.schedule();
  }

  private schedule(): void {
    if (this.batching !== "tick" || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      // Never throws: a failure is kept for the retry and reported once.
      this.commitPending();
    });
  }
}

/** The top-level call `nodeId` belongs to: the end of its `caller` chain. */
function topLevelOf(graph: SessionGraph, nodeId: string): string {
  let node = graph.get(nodeId);
  // The bound guards against a caller cycle in damaged data.
  for (let steps = 0; node !== undefined && node.caller !== null && steps <= graph.size; steps++) {
    const caller = graph.get(node.caller);
    if (caller === undefined) return node.caller;
    node = caller;
  }
  return node?.id ?? nodeId;
}

/** Applies queued operations to a graph being built. */
function addOperations(graph: SessionGraph, operations: readonly QueuedOperation[]): void {
  for (const operation of operations) {
    if (operation.kind === "append") graph.add(operation.node);
    else {
      const current = graph.get(operation.id);
      if (current !== undefined) graph.replace(applyUpdate(current, operation.fields));
    }
  }
}

/** Operations kept after a failed commit, until a commit takes them. */
interface Kept {
  readonly operations: QueuedOperation[];
  readonly index: Map<string, QueuedOperation>;
  /** The last error their commit failed with. */
  error: unknown;
  /** The last top-level node among them: it would become the head when they are committed. */
  headId: string | undefined;
  /** The last top-level node this writer committed while they were kept: it stays the head. */
  supersededBy: string | undefined;
  timer?: ReturnType<typeof setTimeout> | undefined;
  delay?: number;
}

/** The history window is read again past twice its last read size, and never below this many nodes. */
const WINDOW_NODES = 10_000;

/** Batches up to this many operations are searched by a scan; larger ones get an index. */
const SCAN_LIMIT = 16;

/** Placeholder for the node of an append being built. */
const UNSET = undefined as unknown as SessionNode;

/** A queued update; later updates of the same id fold into it. */
interface QueuedUpdate {
  readonly kind: "update";
  readonly id: string;
  fields: SessionNodeUpdate;
  /** The run lease the update is made under (see {@link SessionUpdateOptions.fence}). */
  fence: LeaseFence | undefined;
}

/** The distinct fences of `operations`, or undefined when none is fenced (most commits: no array is made). */
function fencesOf(operations: readonly QueuedOperation[]): LeaseFence[] | undefined {
  let fences: LeaseFence[] | undefined;
  for (const operation of operations) {
    const fence = operation.fence;
    if (fence === undefined) continue;
    if (fences === undefined) fences = [fence];
    else if (!fences.some((known) => known.runId === fence.runId && known.epoch === fence.epoch)) fences.push(fence);
  }
  return fences;
}

/** Removes, in place and in order, the items `test` picks. */
function removeWhere<T>(items: T[], test: (item: T) => boolean): void {
  let kept = 0;
  for (const item of items) if (!test(item)) items[kept++] = item;
  items.length = kept;
}

/** What the writer queues: the store sees these as {@link SessionWriteOperation}s. */
type QueuedOperation = QueuedAppend | QueuedUpdate;

/** Forgets the text of the fields an update replaced: the store serialises their new values. */
function dropReplacedText(json: NodeJson, changes: SessionNodeUpdate): void {
  if ("input" in changes) json.input = undefined;
  if ("output" in changes) json.output = undefined;
  if (changes.metadata !== undefined) json.metadata = undefined;
}
