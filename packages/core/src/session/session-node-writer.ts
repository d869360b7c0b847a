import type { SessionNode, SessionNodeRole } from "./session-node";
import type { SessionNodeUpdate, SessionStoreLike, SessionWriteOperation } from "./session-store-like";
import { SessionGraph } from "./session-graph";
import { SessionNodeNotFoundError } from "./session-errors";
import { markPending, markSettled } from "./writer-registry";
import { rememberNodeJson, type NodeJson } from "./node-json";
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

/** JSON text of a value (undefined stays undefined); throws a TypeError naming `what` when it is not JSON. */
function serialise(value: unknown, what: string): string | undefined {
  if (value === undefined) return undefined;
  try {
    return JSON.stringify(value);
  } catch (cause) {
    throw new TypeError(`${what} is not JSON-serialisable: ${(cause as Error).message}`, { cause });
  }
}

/** Options of {@link SessionNodeWriter.append}. */
export interface SessionAppendOptions {
  /**
   * The caller hands the values over: they are plain JSON data that nobody
   * mutates afterwards. The writer then keeps them without a snapshot (no
   * JSON round trip now; a file store serialises them on commit). The runtime
   * uses it for model turns.
   * @default false
   */
  owned?: boolean;
}

/** A JSON round trip: validates serialisability now and snapshots the value. */
function snapshot(value: unknown, what: string): unknown {
  if (isJsonScalar(value)) return value;
  const text = serialise(value, what);
  return text === undefined ? undefined : JSON.parse(text);
}

/** Strings, finite numbers, booleans and null are their own snapshot: no round trip needed. */
function isJsonScalar(value: unknown): boolean {
  const type = typeof value;
  return value === null || type === "string" || type === "boolean" || (type === "number" && Number.isFinite(value));
}

/**
 * The snapshot of `value` whose JSON is `text`: scalars as given, flat
 * arrays and plain objects of scalars as shallow copies (the common case
 * for arguments and metadata), anything deeper parsed back from `text`.
 */
function parsed(value: unknown, text: string | undefined): unknown {
  if (text === undefined) return undefined;
  if (isJsonScalar(value)) return value;
  if (Array.isArray(value)) return value.every(isJsonScalar) ? value.slice() : JSON.parse(text);
  if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const copy: Record<string, unknown> = {};
    for (const key in value) {
      const item = (value as Record<string, unknown>)[key];
      if (item === undefined) continue;
      if (!isJsonScalar(item)) return JSON.parse(text);
      copy[key] = item;
    }
    return copy;
  }
  return JSON.parse(text);
}

function mergeUpdate(into: SessionNodeUpdate, fields: SessionNodeUpdate): SessionNodeUpdate {
  const merged: SessionNodeUpdate = { ...into, ...fields };
  if (into.metadata !== undefined || fields.metadata !== undefined) {
    merged.metadata = { ...into.metadata, ...fields.metadata };
  }
  return merged;
}

function applyUpdate(node: SessionNode, fields: SessionNodeUpdate): SessionNode {
  const metadata: Record<string, unknown> = { ...node.metadata, ...fields.metadata };
  for (const key of Object.keys(metadata)) if (metadata[key] === undefined) delete metadata[key];
  return {
    ...node,
    name: fields.name ?? node.name,
    input: "input" in fields ? fields.input : node.input,
    output: "output" in fields ? fields.output : node.output,
    metadata,
  };
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
  private queue: SessionWriteOperation[] = [];
  /** Index in `queue` of the pending append or update of an id. */
  private readonly queued = new Map<string, number>();
  /** Seq of every id appended through this writer. */
  private readonly appended = new Map<string, number>();
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
   * Queues a node. Idempotent on id: appending an id this writer already
   * appended (or the store already holds, checked at commit) writes nothing
   * and the first version stays. Returns the node as it will be stored.
   * Throws a `TypeError` when `input`, `output` or `metadata` is not JSON.
   */
  append(node: SessionNodeInput, options?: SessionAppendOptions): SessionNode {
    checkNodeId("SessionNodeWriter.append", node?.id);
    const knownSeq = this.appended.get(node.id);
    const seq = knownSeq ?? node.seq ?? this.nextSeq;
    let stored: SessionNode;
    if (options?.owned === true) {
      // Handed over: plain JSON data nobody mutates later. Kept as is; stores serialise on commit.
      stored = {
        id: node.id,
        seq,
        createdAt: node.createdAt ?? Date.now(),
        role: node.role,
        name: node.name,
        input: node.input,
        output: node.output,
        caller: node.caller ?? null,
        predecessor: node.predecessor ?? null,
        metadata: { ...node.metadata },
      };
    } else {
      const json: NodeJson = {
        input: serialise(node.input, `Session node '${node.id}' input`),
        output: serialise(node.output, `Session node '${node.id}' output`),
        metadata: serialise(node.metadata ?? {}, `Session node '${node.id}' metadata`) ?? "{}",
      };
      stored = {
        id: node.id,
        seq,
        createdAt: node.createdAt ?? Date.now(),
        role: node.role,
        name: node.name,
        input: parsed(node.input, json.input),
        output: parsed(node.output, json.output),
        caller: node.caller ?? null,
        predecessor: node.predecessor ?? null,
        metadata: parsed(node.metadata ?? {}, json.metadata) as Record<string, unknown>,
      };
      rememberNodeJson(stored, json);
    }
    if (knownSeq !== undefined || stored.metadata["expose"] === "hidden") return stored;
    this.appended.set(node.id, seq);
    this.nextSeq = Math.max(this.nextSeq, seq + 1);
    if (stored.caller === null) this.pendingHead = stored.id;
    this.live?.add(stored);
    this.queued.set(stored.id, this.queue.length);
    this.enqueue({ kind: "append", node: stored });
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
    const clean: SessionNodeUpdate = {};
    if (fields.name !== undefined) clean.name = fields.name;
    if ("input" in fields) clean.input = snapshot(fields.input, `Session node '${id}' input`);
    if ("output" in fields) clean.output = snapshot(fields.output, `Session node '${id}' output`);
    if (fields.metadata !== undefined) {
      // One round trip for the whole object; undefined-valued keys (dropped by JSON) mean
      // "remove this key", so they are put back.
      const metadata = snapshot(fields.metadata, `Session node '${id}' metadata`) as Record<string, unknown>;
      for (const [key, value] of Object.entries(fields.metadata)) if (value === undefined) metadata[key] = undefined;
      clean.metadata = metadata;
    }
    const current = this.live?.get(id);
    if (current !== undefined) this.live?.replace(applyUpdate(current, clean));
    const index = this.queued.get(id);
    if (index !== undefined) {
      const operation = this.queue[index]!;
      this.queue[index] =
        operation.kind === "append"
          ? { kind: "append", node: applyUpdate(operation.node, clean) }
          : { kind: "update", id, fields: mergeUpdate(operation.fields, clean) };
      this.schedule();
      return;
    }
    if (!this.appended.has(id) && !this.store.hasNode(this.sessionId, id)) {
      throw new SessionNodeNotFoundError(this.sessionId, id, this.store.location);
    }
    this.queued.set(id, this.queue.length);
    this.enqueue({ kind: "update", id, fields: clean });
  }

  /**
   * Commits the queue now, in one transaction. Rethrows a failure of an
   * earlier background commit (the queue is kept, so a later flush retries).
   */
  flush(): void {
    if (this.queue.length === 0) {
      this.failure = undefined;
      return;
    }
    const operations = this.queue;
    try {
      this.store.commit(this.sessionId, operations);
    } catch (error) {
      this.failure = error;
      throw error;
    }
    this.failure = undefined;
    if (this.queue === operations) {
      this.queue = [];
      this.queued.clear();
      this.pendingHead = undefined;
    }
    markSettled(this.store, this);
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

  private enqueue(operation: SessionWriteOperation): void {
    this.queue.push(operation);
    markPending(this.store, this);
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
