import type { SessionNode } from "./session-node";

const EMPTY: readonly SessionNode[] = Object.freeze([]);

function insertBySeq(list: SessionNode[], node: SessionNode): void {
  const last = list[list.length - 1];
  if (last === undefined || last.seq <= node.seq) {
    list.push(node);
    return;
  }
  // Out-of-order insert (rare: nodes loaded from two writers); keep seq order.
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (list[middle]!.seq <= node.seq) low = middle + 1;
    else high = middle;
  }
  list.splice(low, 0, node);
}

/** Adds `node` to the list of `key` in `index`, in `seq` order. */
function addToList<K>(index: Map<K, SessionNode[]>, key: K, node: SessionNode): void {
  const list = index.get(key);
  // A literal of one: an empty list grown by push would reserve room for 17.
  if (list === undefined) index.set(key, [node]);
  else insertBySeq(list, node);
}

/**
 * An in-memory session DAG: nodes by id in `seq` order, plus the two
 * indexes history selection and branches need — the call tree (`caller` →
 * nodes that ran inside it) and the spine (`predecessor` → nodes that came
 * after it). Built by `SessionNodeWriter.load()`, or directly from nodes
 * for tests and for the no-SQLite case.
 *
 * The two indexes are built on first use and kept current from then on: a
 * graph that only stores nodes (the in-memory store's) never pays for them.
 *
 * @example
 * ```ts
 * const graph = new SessionGraph(store.readNodes("s1"));
 * graph.spine(store.head("s1")!).map((node) => node.name);
 * ```
 */
export class SessionGraph {
  /** Nodes by id, in insertion order: `seq` order unless {@link outOfOrder}. */
  private readonly byId = new Map<string, SessionNode>();
  /** True once a node was added with a lower `seq` than the last one. */
  private outOfOrder = false;
  private lastSeq = -Infinity;
  /** The nodes in `seq` order, made by {@link all} when asked; dropped by every change. */
  private ordered: SessionNode[] | undefined;
  /** Nodes by caller; undefined until {@link childrenOf} or {@link tips} first needs it. */
  private byCaller: Map<string | null, SessionNode[]> | undefined;
  /**
   * Nodes by the id of their predecessor; undefined until first needed.
   * Nearly every node has exactly one successor, so a single node is kept
   * as is and a list is made only at a fork: one list per node would be
   * most of the index's memory.
   */
  private bySuccessor: Map<string, SessionNode | SessionNode[]> | undefined;

  /** @param nodes the session's nodes, ideally in `seq` order. */
  constructor(nodes: Iterable<SessionNode> = []) {
    for (const node of nodes) this.add(node);
  }

  /** Number of nodes. */
  get size(): number {
    return this.byId.size;
  }

  /** Nodes by id. */
  get nodes(): ReadonlyMap<string, SessionNode> {
    return this.byId;
  }

  /**
   * Adds a node; a node whose id is already present is ignored (the first
   * one wins, as in the stores). Returns true when the node was added.
   */
  add(node: SessionNode): boolean {
    if (this.byId.has(node.id)) return false;
    this.byId.set(node.id, node);
    if (node.seq < this.lastSeq) this.outOfOrder = true;
    else this.lastSeq = node.seq;
    this.ordered = undefined;
    if (this.byCaller !== undefined) addToList(this.byCaller, node.caller, node);
    if (this.bySuccessor !== undefined) addSuccessor(this.bySuccessor, node);
    return true;
  }

  /**
   * Replaces a stored node by a new version with the same id, `caller` and
   * `predecessor` (an update of output, status or metadata, or the `seq`
   * the store gave it in place of the one its writer proposed).
   */
  replace(node: SessionNode): void {
    const previous = this.byId.get(node.id);
    if (previous === undefined) {
      this.add(node);
      return;
    }
    if (previous.seq !== node.seq) {
      // Rare (another writer committed first): the node moves to its new place in seq order.
      this.remove(previous);
      this.add(node);
      return;
    }
    // Setting an existing key keeps its place in the map's order.
    this.byId.set(node.id, node);
    this.ordered = undefined;
    const swap = (list: SessionNode[] | undefined): void => {
      if (list === undefined) return;
      // Updates almost always hit recent nodes: search from the end.
      const index = list.lastIndexOf(previous);
      if (index >= 0) list[index] = node;
    };
    swap(this.byCaller?.get(previous.caller));
    if (previous.predecessor !== null && this.bySuccessor !== undefined) {
      const successors = this.bySuccessor.get(previous.predecessor);
      if (successors === previous) this.bySuccessor.set(previous.predecessor, node);
      else if (Array.isArray(successors)) swap(successors);
    }
  }

  /** Takes `node` out of the graph and its indexes. */
  private remove(node: SessionNode): void {
    this.byId.delete(node.id);
    this.ordered = undefined;
    const siblings = this.byCaller?.get(node.caller);
    if (siblings !== undefined) removeFrom(siblings, node);
    if (node.predecessor !== null && this.bySuccessor !== undefined) {
      const successors = this.bySuccessor.get(node.predecessor);
      if (successors === node) this.bySuccessor.delete(node.predecessor);
      else if (Array.isArray(successors)) removeFrom(successors, node);
    }
  }

  /** The node with this id, if any. */
  get(id: string): SessionNode | undefined {
    return this.byId.get(id);
  }

  /** True when a node with this id is in the graph. */
  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** Every node in `seq` order. */
  all(): readonly SessionNode[] {
    if (this.ordered === undefined) {
      const nodes = [...this.byId.values()];
      // A stable sort: nodes of equal seq keep the order they were added in.
      if (this.outOfOrder) nodes.sort((a, b) => a.seq - b.seq);
      this.ordered = nodes;
    }
    return this.ordered;
  }

  /** Nodes that ran directly inside the call `callerId` (null: top-level nodes), in `seq` order. */
  childrenOf(callerId: string | null): readonly SessionNode[] {
    return this.callerIndex().get(callerId) ?? EMPTY;
  }

  /** Nodes whose `predecessor` is `id`, in `seq` order (more than one means a fork). */
  successorsOf(id: string): readonly SessionNode[] {
    const successors = this.successorIndex().get(id);
    if (successors === undefined) return EMPTY;
    return Array.isArray(successors) ? successors : [successors];
  }

  /**
   * The predecessor spine ending at `headId`, oldest first: the head, its
   * predecessor, that node's predecessor… reversed. Unknown ids end the walk.
   */
  spine(headId: string): SessionNode[] {
    const spine: SessionNode[] = [];
    let node = this.byId.get(headId);
    // The bound guards against a predecessor cycle in damaged data.
    while (node !== undefined && spine.length <= this.byId.size) {
      spine.push(node);
      node = node.predecessor === null ? undefined : this.byId.get(node.predecessor);
    }
    return spine.reverse();
  }

  /** True when `ancestorId` is on the caller chain of `node` (the node itself excluded). */
  isDescendantOf(node: SessionNode, ancestorId: string): boolean {
    let callerId = node.caller;
    for (let steps = 0; callerId !== null && steps <= this.byId.size; steps++) {
      if (callerId === ancestorId) return true;
      callerId = this.byId.get(callerId)?.caller ?? null;
    }
    return false;
  }

  /**
   * Branch tips: top-level nodes (`caller === null`) that no node names as
   * `predecessor`, in `seq` order.
   */
  tips(): SessionNode[] {
    const successors = this.successorIndex();
    return this.childrenOf(null).filter((node) => !successors.has(node.id));
  }

  private callerIndex(): Map<string | null, SessionNode[]> {
    if (this.byCaller === undefined) {
      // From the seq-ordered list, so every list comes out in seq order.
      this.byCaller = new Map();
      for (const node of this.all()) addToList(this.byCaller, node.caller, node);
    }
    return this.byCaller;
  }

  private successorIndex(): Map<string, SessionNode | SessionNode[]> {
    if (this.bySuccessor === undefined) {
      this.bySuccessor = new Map();
      for (const node of this.all()) addSuccessor(this.bySuccessor, node);
    }
    return this.bySuccessor;
  }
}

/** Removes `node` from `list`, when there. */
function removeFrom(list: SessionNode[], node: SessionNode): void {
  const index = list.lastIndexOf(node);
  if (index >= 0) list.splice(index, 1);
}

/** Indexes `node` under its predecessor: as is when it is the only successor, in a list from the second on. */
function addSuccessor(index: Map<string, SessionNode | SessionNode[]>, node: SessionNode): void {
  if (node.predecessor === null) return;
  const successors = index.get(node.predecessor);
  if (successors === undefined) index.set(node.predecessor, node);
  else if (Array.isArray(successors)) insertBySeq(successors, node);
  else {
    const fork = [successors];
    insertBySeq(fork, node);
    index.set(node.predecessor, fork);
  }
}
