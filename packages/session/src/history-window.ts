import type { SessionNode } from "./session-node";
import type { SessionStoreAsyncReads, SessionStoreLike } from "./session-store-like";
import { SessionGraph } from "./session-graph";

/** The history window is read again past twice its last read size, and never below this many nodes. */
const WINDOW_NODES = 10_000;

/**
 * Turns read first when the window catches up on what another writer wrote
 * (doubled until the read meets the window): a writer taking turns with one
 * other finds that one's last turn, and the turn before, which it has.
 */
const CATCH_UP_TURNS = 2;

/**
 * What a {@link HistoryWindow} needs of its writer: the writes it has not
 * committed yet, and to hear of the highest `seq` a read found.
 * @internal
 */
export interface WindowWriter {
  /** Adds the writer's pending operations (kept or in flight, then queued) to `graph`. */
  addPending(graph: SessionGraph): void;
  /** A read of the window found a node with this `seq`: the writer's next proposal follows it. */
  sawSeq(seq: number): void;
}

/**
 * A writer's history window: the nodes history for its requests draws on,
 * read along the head's ancestry ({@link SessionStoreLike.readAncestry})
 * and kept current by the writer's own writes, so selecting history for
 * each model request costs no database read. A bounded cache: read again
 * once it has grown past its limit, or when a call starts after a node it
 * lacks (written elsewhere).
 * @internal
 */
export class HistoryWindow {
  /** The window; undefined until read, and after {@link drop}. */
  private live: SessionGraph | undefined;
  /** The size past which {@link live} is read again: twice what the last read held, and at least {@link WINDOW_NODES}. */
  private limit = WINDOW_NODES;
  /** How many turns back {@link live} was read (it holds those and every turn written since). */
  private turns = Infinity;
  /** A node another writer wrote that {@link live} must read in before it serves (see {@link catchUp}). */
  private behind: string | undefined;

  /**
   * @param store where the window is read from.
   * @param sessionId the writer's session.
   * @param writer the writer whose pending writes the window adds.
   */
  constructor(
    private readonly store: SessionStoreLike,
    private readonly sessionId: string,
    private readonly writer: WindowWriter,
  ) {}

  /** The window as read and kept current, or undefined when it is not read. */
  get graph(): SessionGraph | undefined {
    return this.live;
  }

  /** The node of `id` in the window. */
  get(id: string): SessionNode | undefined {
    return this.live?.get(id);
  }

  /** True when the window holds a node of `id`. */
  has(id: string): boolean {
    return this.live?.has(id) === true;
  }

  /** Takes a node the writer appended (when the window is read). */
  add(node: SessionNode): void {
    this.live?.add(node);
  }

  /** Takes a new version of a node it holds. */
  replace(node: SessionNode): void {
    this.live?.replace(node);
  }

  /** Forgets the window: it holds versions the store will not (a dropped write); read again on next use. */
  drop(): void {
    this.live = undefined;
    this.behind = undefined;
  }

  /**
   * The graph for a request at `headId` made in call `callId`: the window
   * when it holds `headId`, is within its bound and was read for as many
   * turns as the call shows; else the window read again (see {@link read}).
   */
  graphFor(headId: string, callId: string | null): SessionGraph {
    const behind = this.behind;
    if (behind !== undefined) {
      const joining = this.joining(behind);
      for (let step = joining.next(); step.done !== true; ) step = joining.next(this.readAncestry(behind, step.value));
    }
    const live = this.live;
    if (live !== undefined && live.size <= this.limit && live.has(headId)) {
      // A window read for fewer turns than this call shows cannot serve it.
      if (this.turns === Infinity || this.turnsOf(callId, live) <= this.turns) return live;
    }
    return this.read(headId, callId);
  }

  /**
   * A top-level call is about to start after `nodeId`: when the window
   * lacks that node, another writer (another process, another machine)
   * wrote it, and on next use the window reads in what that writer wrote
   * since: `nodeId`'s last turns, more while what was read does not meet
   * the window, so two writers taking turns each read the other's turn, not
   * the whole ancestry again. A second such node before that use, or a read
   * that never meets the window (damaged links), and the window is read
   * again whole.
   */
  catchUp(nodeId: string | null): void {
    const live = this.live;
    if (nodeId === null || live === undefined || live.has(nodeId) || this.behind === nodeId) return;
    if (this.behind === undefined) this.behind = nodeId;
    else this.drop();
  }

  /** The window, or when it is not read, a graph of the writer's pending writes alone. */
  windowOrPending(): SessionGraph {
    if (this.live !== undefined) return this.live;
    const graph = new SessionGraph();
    this.writer.addPending(graph);
    return graph;
  }

  /**
   * Reads the window for `headId`: its pending ancestors are the writer's,
   * the committed ones are read along the ancestry of each committed node
   * they lead to (usually one: the previous turn). Nothing is committed, so
   * a manual writer never commits behind its user's back.
   */
  private read(headId: string, callId: string | null): SessionGraph {
    const pending = this.pending();
    const turns = this.turnsOf(callId, pending);
    const read: SessionNode[][] = [];
    for (const root of rootsOf(headId, pending)) read.push(this.readAncestry(root, turns));
    return this.keep(read, turns);
  }

  /**
   * {@link read} on the store's `asyncReads`, for every turn, ahead of a
   * top-level call after `headId` (see `SessionNodeWriter.readAhead`): the
   * call then finds its history here and reads nothing. Nothing is read when
   * the window holds `headId` already.
   */
  async readAhead(headId: string, reads: SessionStoreAsyncReads): Promise<void> {
    this.catchUp(headId);
    const behind = this.behind;
    if (behind !== undefined) {
      const joining = this.joining(behind);
      for (let step = joining.next(); step.done !== true; ) step = joining.next(await reads.readAncestry(this.sessionId, behind, { turns: step.value }));
    }
    const live = this.live;
    if (live !== undefined && live.size <= this.limit && live.has(headId) && this.turns === Infinity) return;
    const read: SessionNode[][] = [];
    for (const root of rootsOf(headId, this.pending())) read.push(await reads.readAncestry(this.sessionId, root));
    this.keep(read, Infinity);
  }

  /** The writer's pending writes, as a graph. */
  private pending(): SessionGraph {
    const pending = new SessionGraph();
    this.writer.addPending(pending);
    return pending;
  }

  /**
   * The steps of catching up on `nodeId` (see {@link catchUp}): yields how
   * many of its turns to read and takes what was read, until that joins the
   * window; drops the window when a read stops growing without joining it.
   * One walk for the synchronous and the asynchronous reads.
   */
  private *joining(nodeId: string): Generator<number, void, SessionNode[]> {
    this.behind = undefined;
    let size = -1;
    for (let turns = CATCH_UP_TURNS; this.live !== undefined; turns *= 2) {
      const read: SessionNode[] = yield turns;
      if (this.join(nodeId, read)) return;
      if (read.length === size) this.drop();
      size = read.length;
    }
  }

  /**
   * Adds `read` (`nodeId`'s last turns) to the window when it holds
   * `nodeId` and every node of it links (caller, predecessor) to a node
   * read or held — the read met the window — and says whether it did. A
   * node held is taken in its stored version unless the writer has a
   * pending write to it.
   */
  private join(nodeId: string, read: readonly SessionNode[]): boolean {
    const live = this.live;
    if (live === undefined) return false;
    const ids = new Set(read.map((node) => node.id));
    if (!ids.has(nodeId)) return false;
    const known = (id: string | null): boolean => id === null || ids.has(id) || live.has(id);
    if (!read.every((node) => known(node.caller) && known(node.predecessor))) return false;
    const pending = this.pending();
    for (const node of read) if (!live.add(node) && !pending.has(node.id)) live.replace(node);
    const last = read.at(-1);
    if (last !== undefined) this.writer.sawSeq(last.seq);
    return true;
  }

  /** Makes the window of what was read (read for `turns` turns) and the writer's pending writes. */
  private keep(read: readonly SessionNode[][], turns: number): SessionGraph {
    const graph = new SessionGraph();
    for (const nodes of read) for (const node of nodes) graph.add(node);
    this.writer.addPending(graph);
    const last = graph.all().at(-1);
    if (last !== undefined) this.writer.sawSeq(last.seq);
    this.limit = Math.max(WINDOW_NODES, 2 * graph.size);
    this.turns = turns;
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
}

/**
 * The top-level call `nodeId` belongs to in `graph`: the end of its `caller` chain.
 * @internal
 */
export function topLevelOf(graph: SessionGraph, nodeId: string): string {
  let node = graph.get(nodeId);
  // The bound guards against a caller cycle in damaged data.
  for (let steps = 0; node !== undefined && node.caller !== null && steps <= graph.size; steps++) {
    const caller = graph.get(node.caller);
    if (caller === undefined) return node.caller;
    node = caller;
  }
  return node?.id ?? nodeId;
}

/** The committed nodes `headId`'s ancestry leads to past the pending ones in `pending` (headId itself when committed). */
function rootsOf(headId: string, pending: SessionGraph): Set<string> {
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
  return roots;
}
