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

/**
 * An in-memory session DAG: nodes by id plus the two indexes history
 * selection needs — the call tree (`caller` → nodes that ran inside it) and
 * the spine (`predecessor` → nodes that came after it). Built by
 * `SessionNodeWriter.load()`, or directly from nodes for tests and for the
 * no-SQLite case.
 *
 * @example
 * ```ts
 * const graph = new SessionGraph(store.readNodes("s1"));
 * graph.spine(store.head("s1")!).map((node) => node.name);
 * ```
 */
export class SessionGraph {
  private readonly byId = new Map<string, SessionNode>();
  private readonly ordered: SessionNode[] = [];
  private readonly byCaller = new Map<string | null, SessionNode[]>();
  private readonly bySuccessor = new Map<string, SessionNode[]>();

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
    insertBySeq(this.ordered, node);
    let siblings = this.byCaller.get(node.caller);
    if (siblings === undefined) this.byCaller.set(node.caller, (siblings = []));
    insertBySeq(siblings, node);
    if (node.predecessor !== null) {
      let successors = this.bySuccessor.get(node.predecessor);
      if (successors === undefined) this.bySuccessor.set(node.predecessor, (successors = []));
      insertBySeq(successors, node);
    }
    return true;
  }

  /**
   * Replaces a stored node by a new version with the same id, `seq`,
   * `caller` and `predecessor` (an update of output, status or metadata).
   */
  replace(node: SessionNode): void {
    const previous = this.byId.get(node.id);
    if (previous === undefined) {
      this.add(node);
      return;
    }
    this.byId.set(node.id, node);
    const swap = (list: SessionNode[] | undefined): void => {
      if (list === undefined) return;
      // Updates almost always hit recent nodes: search from the end.
      const index = list.lastIndexOf(previous);
      if (index >= 0) list[index] = node;
    };
    swap(this.ordered);
    swap(this.byCaller.get(previous.caller));
    if (previous.predecessor !== null) swap(this.bySuccessor.get(previous.predecessor));
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
    return this.ordered;
  }

  /** Nodes that ran directly inside the call `callerId` (null: top-level nodes), in `seq` order. */
  childrenOf(callerId: string | null): readonly SessionNode[] {
    return this.byCaller.get(callerId) ?? EMPTY;
  }

  /** Nodes whose `predecessor` is `id`, in `seq` order (more than one means a fork). */
  successorsOf(id: string): readonly SessionNode[] {
    return this.bySuccessor.get(id) ?? EMPTY;
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
    return this.childrenOf(null).filter((node) => this.successorsOf(node.id).length === 0);
  }
}
