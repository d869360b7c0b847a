import type { SessionNode } from "./session-node";
import type { SessionGraphFormat, SessionInfo } from "./session-store-like";

/** A node's label; control characters but the newline (which each format writes its own way) become spaces, so a picture printed on a terminal cannot drive it. */
function labelOf(node: SessionNode): string {
  const status = node.metadata["status"];
  return `${node.role}: ${node.name}${typeof status === "string" ? ` (${status})` : ""}`.replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, " ");
}

function mermaidText(text: string): string {
  return text.replace(/"/g, "#quot;").replace(/\n/g, " ");
}

function dotText(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/**
 * Renders a session's nodes (in `seq` order) as JSON, a Mermaid flowchart or
 * Graphviz dot. In the pictures a solid arrow is a `predecessor` edge (what
 * came next in the same scope), a dotted arrow a `caller` edge (what ran
 * inside a call), and the head is highlighted. Every store's `exportGraph` returns
 * this, so the pictures are the same whichever store holds the session.
 *
 * @example
 * ```ts
 * exportGraph(sessionId: string, options: ExportGraphOptions = {}): string {
 *   exportGraphOptionsSchema.parse(options);
 *   return renderSessionGraph(this.getSession(sessionId), this.readNodes(sessionId), options.format ?? "json");
 * }
 * ```
 */
export function renderSessionGraph(
  session: SessionInfo,
  nodes: readonly SessionNode[],
  format: SessionGraphFormat,
): string {
  if (format === "json") {
    return JSON.stringify({ session, nodes }, null, 2);
  }
  const key = new Map<string, string>();
  nodes.forEach((node, index) => key.set(node.id, `n${index}`));
  const edges: { from: string; to: string; kind: "predecessor" | "caller" }[] = [];
  for (const node of nodes) {
    if (node.caller !== null && key.has(node.caller)) edges.push({ from: node.caller, to: node.id, kind: "caller" });
    if (node.predecessor !== null && key.has(node.predecessor)) {
      edges.push({ from: node.predecessor, to: node.id, kind: "predecessor" });
    }
  }
  const head = session.headId === null ? undefined : key.get(session.headId);

  if (format === "mermaid") {
    const lines = ["flowchart TD"];
    for (const node of nodes) lines.push(`  ${key.get(node.id)}["${mermaidText(labelOf(node))}"]`);
    for (const edge of edges) {
      lines.push(`  ${key.get(edge.from)} ${edge.kind === "predecessor" ? "-->" : "-.->"} ${key.get(edge.to)}`);
    }
    if (head !== undefined) lines.push("  classDef head stroke-width:3px", `  class ${head} head`);
    return lines.join("\n") + "\n";
  }
  if (format === "dot") {
    const lines = [`digraph "${dotText(session.id)}" {`, "  node [shape=box];"];
    for (const node of nodes) {
      const bold = key.get(node.id) === head ? ", penwidth=3" : "";
      lines.push(`  ${key.get(node.id)} [label="${dotText(labelOf(node))}"${bold}];`);
    }
    for (const edge of edges) {
      lines.push(`  ${key.get(edge.from)} -> ${key.get(edge.to)}${edge.kind === "caller" ? " [style=dashed]" : ""};`);
    }
    lines.push("}");
    return lines.join("\n") + "\n";
  }
  throw new TypeError(`Unknown graph format '${String(format)}': use "json", "mermaid" or "dot".`);
}
