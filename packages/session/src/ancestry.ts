import type { SessionGraph } from "./session-graph";
import type { SessionNode } from "./session-node";

/**
 * Options of {@link SessionStoreLike.readAncestry}.
 * @example
 * ```ts
 * store.readAncestry("s1", headId, { turns: 20 });
 * ```
 */
export interface ReadAncestryOptions {
  /**
   * How many top-level nodes (turns: `caller === null`) of the conversation
   * spine to include, counted back from the node's own turn.
   * @default Infinity
   */
  turns?: number;
}

/**
 * The nodes history for a request at `nodeId` can draw on, in `seq` order,
 * read from a graph: the node and its caller chain; every node reached from
 * those by `predecessor` links (the spines, at most `turns` top-level
 * nodes on the outermost one); and the call subtree of every spine node.
 * `selectHistory` on a graph of just these nodes gives what it gives on the
 * whole session. The SQL stores compute the same set in one recursive
 * query; this is the reference, used by the in-memory store. Unknown id: [].
 * A store without such a query may answer `readAncestry` with it.
 *
 * @example
 * ```ts
 * readAncestry(sessionId: string, nodeId: string, options: ReadAncestryOptions = {}): SessionNode[] {
 *   readAncestryOptionsSchema.parse(options);
 *   return ancestryIn(new SessionGraph(this.readNodes(sessionId)), nodeId, options);
 * }
 * ```
 */
export function ancestryIn(graph: SessionGraph, nodeId: string, options: ReadAncestryOptions = {}): SessionNode[] {
  const turns = options.turns ?? Infinity;
  const start = graph.get(nodeId);
  if (start === undefined || turns < 1) return [];
  const included = new Set<string>();
  const spineNodes: SessionNode[] = [];
  // The caller chain; the bound guards against a cycle in damaged data.
  const chain: SessionNode[] = [];
  for (let node: SessionNode | undefined = start; node !== undefined && chain.length <= graph.size; ) {
    chain.push(node);
    node = node.caller === null ? undefined : graph.get(node.caller);
  }
  for (const link of chain) {
    let turnsSeen = 0;
    for (let node: SessionNode | undefined = link; node !== undefined && !included.has(node.id); ) {
      if (node.caller === null && ++turnsSeen > turns) break;
      included.add(node.id);
      spineNodes.push(node);
      node = node.predecessor === null ? undefined : graph.get(node.predecessor);
    }
  }
  // The call subtrees under the spine nodes.
  const found = spineNodes.slice();
  for (let index = 0; index < found.length; index++) {
    for (const child of graph.childrenOf(found[index]!.id)) {
      if (included.has(child.id)) continue;
      included.add(child.id);
      found.push(child);
    }
  }
  return found.sort((a, b) => a.seq - b.seq);
}
