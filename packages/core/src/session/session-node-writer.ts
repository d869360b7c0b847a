import type { SessionNode, SessionNodeRole } from "./session-node";
import type { SessionNodeUpdate, SessionStoreLike } from "./session-store-like";
import { SessionGraph } from "./session-graph";
import { SessionNodeNotFoundError } from "./session-errors";
import { pendingEntry, type PendingEntry } from "./writer-registry";
import { snapshotChanges, snapshotValue, type NodeJson, type QueuedAppend } from "./node-json";
import { applyUpdate, mergeUpdate } from "./node-update";
import { checkNodeId, checkWriterArguments } from "../options/session-arguments";

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
  /** @default the next seq of the session */
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
export type SessionWriteBatching = "tick" | "manual" | "none";

/**
 * Options of {@link SessionNodeWriter}.
 * @example
 * ```ts
 * new SessionNodeWriter(store, "s1", { batching: "manual" });
 * ```
 */
export interface SessionNodeWriterOptions {
  /** @default "tick" */
  batching?: SessionWriteBatching;
}

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
}

/**
 * Writes the nodes of one session into a store. Appends and updates are
 * queued and committed together in one transaction per event-loop turn, so
 * a scoped call never waits for a synchronous commit; `flush()` commits
 * the queue now (the runtime calls it at the end of every model request and
 * top-level call, so nothing acknowledged to the user is lost). Values are
 * snapshotted as JSON when written.
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
  /** The store written to. */
  readonly store: SessionStoreLike;
  /** The session written to. */
  readonly sessionId: string;
  private readonly batching: SessionWriteBatching;
  /**
   * The batch: at most one operation per id (a later update folds into
   * it). The writer remembers no id beyond it: a committed id is the
   * store's (or the live graph's) to know, so the writer's memory is
   * bounded by one batch.
   */
  private queue: QueuedOperation[] = [];
  /** The batch by id, made once it outgrows a scan (see {@link queuedOperation}); dropped on commit. */
  private queueIndex: Map<string, QueuedOperation> | undefined;
  /** This writer's place among the store's writers with a pending batch. */
  private readonly pendingWriters: PendingEntry;
  private pendingHead: string | undefined;
  private nextSeq: number;
  private scheduled = false;
  private failure: unknown;
  /** The session as a graph, loaded once by {@link graph} and kept current by this writer's own writes. */
  private live: SessionGraph | undefined;

  /**
   * @param store where to write; the session must exist (throws {@link SessionNotFoundError}).
   * @param sessionId the session to write to.
   */
  constructor(store: SessionStoreLike, sessionId: string, options: SessionNodeWriterOptions = {}) {
    checkWriterArguments(store, sessionId, options);
    this.store = store;
    this.sessionId = sessionId;
    this.batching = options.batching ?? "tick";
    this.nextSeq = store.getSession(sessionId).lastSeq + 1;
    this.pendingWriters = pendingEntry(store, this);
  }

  /** How many operations wait for the next commit. */
  get pending(): number {
    return this.queue.length;
  }

  /**
   * The session head including queued writes: the last top-level node
   * appended, or the store's head.
   */
  get head(): string | null {
    return this.pendingHead ?? this.store.head(this.sessionId);
  }

  /**
   * Queues a node. Idempotent on id: appending an id that is queued or
   * stored writes nothing and the first version stays (an id the store
   * holds is looked up there, or in the live graph once loaded). Returns
   * the node as it will be stored. Throws a `TypeError` when `input`,
   * `output` or `metadata` is not JSON.
   */
  append(node: SessionNodeInput, options?: SessionAppendOptions): SessionNode {
    checkNodeId("SessionNodeWriter.append", node?.id);
    const id = node.id;
    const knownSeq = this.seqOf(id);
    const seq = knownSeq ?? node.seq ?? this.nextSeq;
    // Made first: it keeps the JSON text a snapshot makes, for a store that writes text.
    const operation: QueuedAppend = { kind: "append", id, node: UNSET, json: undefined };
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
   * nor stored.
   */
  update(id: string, fields: SessionNodeUpdate): void {
    checkNodeId("SessionNodeWriter.update", id);
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
      this.schedule();
      return;
    }
    if (operation !== undefined) {
      operation.fields = mergeUpdate(operation.fields, changes);
      this.schedule();
      return;
    }
    if (live === undefined && !this.store.hasNode(this.sessionId, id)) {
      throw new SessionNodeNotFoundError(this.sessionId, id, this.store.location);
    }
    this.enqueue({ kind: "update", id, fields: changes });
  }

  /**
   * Commits the queue now, in one transaction. Rethrows a failure of an
   * earlier background commit (the queue is kept, so a later flush retries).
   */
  flush(): void {
    const operations = this.queue;
    if (operations.length === 0) {
      this.failure = undefined;
      return;
    }
    try {
      this.store.commit(this.sessionId, operations);
    } catch (error) {
      this.failure = error;
      throw error;
    }
    this.failure = undefined;
    if (this.queue === operations) {
      this.queue = [];
      this.queueIndex = undefined;
      this.pendingHead = undefined;
    }
    if (this.queue.length === 0) this.pendingWriters.leave();
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
   * The session as a graph, read from the store once and then kept current
   * by this writer's appends and updates, so selecting history for each
   * model request costs no database read. Writes made through another
   * writer after the first call are not seen; use {@link load} for a fresh
   * read.
   */
  graph(): SessionGraph {
    return (this.live ??= this.load());
  }

  /**
   * The seq of a node queued or stored under `id`, or undefined for a new
   * id. Queued ids are known here, stored ones to the live graph (when
   * loaded) or the store. A stored id is rare on this path: its seq is read
   * from a live graph built for the purpose.
   */
  private seqOf(id: string): number | undefined {
    const operation = this.queuedOperation(id);
    if (operation?.kind === "append") return operation.node.seq;
    if (this.live !== undefined) return this.live.get(id)?.seq;
    if (!this.store.hasNode(this.sessionId, id)) return undefined;
    return this.liveGraph().get(id)?.seq;
  }

  /**
   * The live graph, built without committing (the store's nodes, then the
   * queue), so a manual writer never commits behind its user's back.
   */
  private liveGraph(): SessionGraph {
    if (this.live !== undefined) return this.live;
    const graph = new SessionGraph(this.store.readNodes(this.sessionId));
    for (const operation of this.queue) {
      if (operation.kind === "append") graph.add(operation.node);
      else {
        const current = graph.get(operation.id);
        if (current !== undefined) graph.replace(applyUpdate(current, operation.fields));
      }
    }
    return (this.live = graph);
  }

  /**
   * The queued operation of `id`. A batch is usually a handful of
   * operations (the runtime commits after every model request), and a scan
   * from the end costs less than keeping a map per batch; a batch past
   * {@link SCAN_LIMIT} gets an index, so a large one stays linear.
   */
  private queuedOperation(id: string): QueuedOperation | undefined {
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
    if (this.batching === "none") this.flush();
    else this.schedule();
  }

  private schedule(): void {
    if (this.batching !== "tick" || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      // A background failure is kept for the next explicit flush() to throw;
      // throwing here would crash the process from a timer.
      if (this.failure === undefined) {
        try {
          this.flush();
        } catch {
          /* reported by the next flush() */
        }
      }
    });
  }
}

/** Batches up to this many operations are searched by a scan; larger ones get an index. */
const SCAN_LIMIT = 16;

/** Placeholder for the node of an append being built. */
const UNSET = undefined as unknown as SessionNode;

/** A queued update; later updates of the same id fold into it. */
interface QueuedUpdate {
  readonly kind: "update";
  readonly id: string;
  fields: SessionNodeUpdate;
}

/** What the writer queues: the store sees these as {@link SessionWriteOperation}s. */
type QueuedOperation = QueuedAppend | QueuedUpdate;

/** Forgets the text of the fields an update replaced: the store serialises their new values. */
function dropReplacedText(json: NodeJson, changes: SessionNodeUpdate): void {
  if ("input" in changes) json.input = undefined;
  if ("output" in changes) json.output = undefined;
  if (changes.metadata !== undefined) json.metadata = undefined;
}
