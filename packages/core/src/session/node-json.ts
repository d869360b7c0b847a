import type { SessionNode } from "./session-node";

/** The JSON text of a node's values, as the writer produced it when snapshotting. */
export interface NodeJson {
  input: string | undefined;
  output: string | undefined;
  metadata: string;
}

// The writer already serialises every value to snapshot it; keeping the text
// spares the SQLite store a second JSON.stringify per field on commit.
const jsonByNode = new WeakMap<SessionNode, NodeJson>();

/** @internal */
export function rememberNodeJson(node: SessionNode, json: NodeJson): void {
  jsonByNode.set(node, json);
}

/** @internal */
export function nodeJsonOf(node: SessionNode): NodeJson | undefined {
  return jsonByNode.get(node);
}
