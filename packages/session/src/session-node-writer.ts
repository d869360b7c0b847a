import type { SessionNode } from "./session-node";
import type { SessionNodeUpdate, SessionStoreLike } from "./session-store-like";
import { SessionGraph } from "./session-graph";
import { SessionExistsError, SessionNodeNotFoundError, SessionNotFoundError } from "./session-errors";
import { pendingEntry, registerSharedWriter, sharedWriter } from "./writer-registry";
import { snapshotChanges, snapshotValue, type NodeJson, type QueuedAppend } from "./node-json";
import { applyUpdate, mergeUpdate } from "./node-update";
import { checkNodeId } from "./session-arguments";
import { checkNodeNumbers, nodeFromInput, type SessionNodeInput } from "./session-node-input";
import {
  acceptSharedOptions,
  checkWriterArguments,
  type SessionAppendOptions,
  type SessionFlushOptions,
  type SessionNodeWriterOptions,
  type SessionUpdateOptions,
} from "./session-node-writer-options";
import { WriterCommits } from "./writer-commits";

// Named here as before the split, for those who import them from this module.
export type { SessionNodeInput } from "./session-node-input";
export type { SessionAppendOptions, SessionUpdateOptions, SessionFlushOptions } from "./session-node-writer-options";

/** The last `seq` `SessionNodeWriter.open` read, handed to the constructor it calls (synchronously, so never another's). */
let openedLastSeq: number | undefined;

/**
 * Creates the session `sessionId` in `store` when it is missing; one that
 * another writer or process creates meanwhile is taken as it is.
 * @example
 * ```ts
 * ensureSession(store, "s1");
 * const writer = new SessionNodeWriter(store, "s1");
 * ```
 */
export function ensureSession(store: SessionStoreLike, sessionId: string): void {
  if (store.hasSession(sessionId)) return;
  try {
    store.createSession(sessionId, {});
  } catch (error) {
    if (!SessionExistsError.isInstance(error)) throw error;
  }
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
  /** What is not stored yet, and its commits; the history window. */
  private readonly commits!: WriterCommits;

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
        const { batching, onCommitError } = existing.commits;
        existing.commits.onCommitError = acceptSharedOptions({ sessionId, location: store.location, batching, onCommitError }, options);
        // One writer per (store, session): `new` hands out the one in use (see the class doc).
        return existing;
      }
    }
    this.store = store;
    this.sessionId = sessionId;
    this.commits = new WriterCommits(store, sessionId, options.batching ?? "tick", options.onCommitError, pendingEntry(store, this), openedLastSeq);
    if (shared) registerSharedWriter(store, sessionId, this);
  }

  /**
   * The writer of `sessionId`, the session created when missing, as a
   * server opens one per run: on a store with `asyncReads` (the Postgres
   * store's `asyncWrites`) the session is read and created there, never
   * blocking the event loop; elsewhere synchronously. Returns the session's
   * writer in use when there is one, as `new` does.
   * @example
   * ```ts
   * const writer = await SessionNodeWriter.open(store, "s1");
   * await writer.readAhead();
   * const context = Context.forSession(writer, "s1");
   * ```
   */
  static async open(store: SessionStoreLike, sessionId: string, options: SessionNodeWriterOptions = {}): Promise<SessionNodeWriter> {
    checkWriterArguments(store, sessionId, options);
    // The session's writer in use: its session exists (deleting a session lets go of its writer).
    if ((options.shared ?? true) && sharedWriter(store, sessionId) !== undefined) return new SessionNodeWriter(store, sessionId, options);
    const reads = store.asyncReads;
    if (reads === undefined) {
      ensureSession(store, sessionId);
      return new SessionNodeWriter(store, sessionId, options);
    }
    let lastSeq: number;
    try {
      lastSeq = (await reads.getSession(sessionId)).lastSeq;
    } catch (error) {
      if (!SessionNotFoundError.isInstance(error)) throw error;
      // Another process may create it meanwhile: then it is read.
      lastSeq = (await reads.createSession(sessionId).catch((again: unknown) => (SessionExistsError.isInstance(again) ? reads.getSession(sessionId) : Promise.reject(again)))).lastSeq;
    }
    openedLastSeq = lastSeq;
    try {
      return new SessionNodeWriter(store, sessionId, options);
    } finally {
      openedLastSeq = undefined;
    }
  }

  /**
   * Reads what the next top-level call needs before it starts, on a store
   * with `asyncReads`: the session head, and the history behind it into the
   * writer's history window, without blocking the event loop; the call then
   * reads neither (the head read here is used once). A no-op on other stores.
   */
  async readAhead(): Promise<void> {
    const reads = this.store.asyncReads;
    if (reads === undefined) return;
    const commits = this.commits;
    const head = commits.pendingHead ?? (await reads.head(this.sessionId));
    if (commits.pendingHead === undefined) commits.readHead = head;
    if (head !== null) await commits.window.readAhead(head, reads);
  }

  /** How many operations wait for a commit (queued, or kept after a failed commit). */
  get pending(): number {
    return this.commits.pending;
  }

  /**
   * The session head including queued writes: the last top-level node
   * appended through this writer and not yet committed, or the store's
   * head (which another writer or process may have moved).
   */
  get head(): string | null {
    const commits = this.commits;
    if (commits.pendingHead !== undefined) return commits.pendingHead;
    const read = commits.readHead;
    if (read === undefined) return this.store.head(this.sessionId);
    commits.readHead = undefined;
    return read;
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
    checkNodeNumbers(node);
    const commits = this.commits;
    const id = node.id;
    const knownSeq = this.seqOf(id);
    const seq = knownSeq ?? node.seq ?? commits.nextSeq;
    // Made first: it keeps the JSON text a snapshot makes, for a store that writes text.
    const fence = options?.fence;
    const operation: QueuedAppend = { kind: "append", id, node: UNSET, json: undefined, fence };
    const stored = nodeFromInput(node, seq, options?.owned === true, operation);
    if (knownSeq !== undefined || stored.metadata["expose"] === "hidden") return stored;
    // Under a lease already refused: never stored, so never queued.
    if (fence !== undefined && commits.refusals.refusal(fence) !== undefined) return stored;
    commits.sawSeq(seq);
    if (stored.caller === null) commits.pendingHead = id;
    commits.window.add(stored);
    operation.node = stored;
    commits.enqueue(operation);
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
    const commits = this.commits;
    const fence = options?.fence;
    if (fence !== undefined && commits.refusals.refusal(fence) !== undefined) return;
    const changes: SessionNodeUpdate = {};
    if (fields.name !== undefined) changes.name = fields.name;
    if ("input" in fields) changes.input = snapshotValue(fields.input, id, "input");
    if ("output" in fields) changes.output = snapshotValue(fields.output, id, "output");
    if (fields.metadata !== undefined) changes.metadata = snapshotChanges(fields.metadata, id);
    const operation = commits.find(id);
    const queuedNode = operation?.kind === "append" ? operation.node : undefined;
    // An update of a queued append folds into it: the node is stored once, already updated.
    const folded = queuedNode === undefined ? undefined : applyUpdate(queuedNode, changes);
    const live = commits.window.get(id);
    // The window usually holds the queued node itself, and then takes the same updated node.
    if (live !== undefined) commits.window.replace(live === queuedNode ? folded! : applyUpdate(live, changes));
    if (operation?.kind === "append") {
      operation.node = folded!;
      if (operation.json !== undefined) dropReplacedText(operation.json, changes);
      if (fence !== undefined) operation.fence = fence;
      commits.schedule();
      return;
    }
    if (operation !== undefined) {
      operation.fields = mergeUpdate(operation.fields, changes);
      if (fence !== undefined) operation.fence = fence;
      commits.schedule();
      return;
    }
    if (live === undefined && commits.sending?.has(id) !== true && !this.store.hasNode(this.sessionId, id)) {
      throw new SessionNodeNotFoundError(this.sessionId, id, this.store.location);
    }
    commits.enqueue({ kind: "update", id, fields: changes, fence });
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
    this.commits.commitPending();
    this.commits.throwFailure(options?.fence);
  }

  /**
   * {@link flush} on the store's synchronous path even when it has
   * `commitAsync`, the commit in flight there included (committed again,
   * first, in the same transaction as the queue). The store calls it,
   * through `flushPendingWritersSync`, once it has abandoned its commits in
   * flight: when it closes, or when the process exits.
   * @internal
   */
  flushSync(): void {
    this.commits.commitPendingSync();
    this.commits.throwFailure(undefined);
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
    await this.commits.commitAll();
    this.commits.throwFailure(options?.fence);
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
    this.commits.commitCall(nodeId);
  }

  /**
   * Commits like {@link flushCall}, for a top-level run whose nodes are
   * each top-level (`agent.ask()` outside any call): throws when a node of
   * `ids`, or one written inside them, stays uncommitted.
   * @internal
   */
  flushNodes(ids: ReadonlySet<string>): void {
    this.commits.commitNodes(ids);
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
    this.commits.addPending(graph);
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
    return this.commits.window.graphFor(headId, callId);
  }

  /**
   * A top-level call is about to start after `nodeId`: when the history
   * window lacks that node, another writer wrote it, and the window is read
   * again on next use.
   * @internal
   */
  catchUp(nodeId: string | null): void {
    this.commits.window.catchUp(nodeId);
  }

  /** True when a node with this id is queued, kept or stored. */
  has(id: string): boolean {
    const commits = this.commits;
    return commits.find(id) !== undefined || commits.sending?.has(id) === true || commits.window.has(id) || this.store.hasNode(this.sessionId, id);
  }

  /**
   * The seq of a node queued, kept, in flight or in the history window
   * under `id`, or undefined for an id this writer does not know. An id
   * the store holds outside the window is not looked up here (a round trip
   * per append): its append is dropped when the commit finds the id taken
   * (see `commitToStore`), so the first version stays all the same.
   */
  private seqOf(id: string): number | undefined {
    const operation = this.commits.find(id) ?? this.commits.sending?.get(id);
    if (operation?.kind === "append") return operation.node.seq;
    return this.commits.window.get(id)?.seq;
  }
}

/** Placeholder for the node of an append being built. */
const UNSET = undefined as unknown as SessionNode;

/** Forgets the text of the fields an update replaced: the store serialises their new values. */
function dropReplacedText(json: NodeJson, changes: SessionNodeUpdate): void {
  if ("input" in changes) json.input = undefined;
  if ("output" in changes) json.output = undefined;
  if (changes.metadata !== undefined) json.metadata = undefined;
}
