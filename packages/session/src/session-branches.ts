import type { SessionGraph } from "./session-graph";
import type { SessionBranch } from "./session-store-like";

/**
 * The branches of a session graph: its top-level tips, oldest first.
 * @internal shared by the stores' `listBranches`.
 */
export function branchesOf(graph: SessionGraph, headId: string | null): SessionBranch[] {
  return graph.tips().map((tip) => ({
    tipId: tip.id,
    length: graph.spine(tip.id).filter((node) => node.caller === null).length,
    createdAt: tip.createdAt,
    isHead: tip.id === headId,
  }));
}
