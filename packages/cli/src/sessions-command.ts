import type { SessionNode } from "rein";
import type { CliIo } from "./cli-io";
import { CliUsageError } from "./exit-codes";
import { DEFAULT_STORE_PATH } from "./default-paths";
import { oneLine, shown, time, withStore } from "./store-access";

export { DEFAULT_STORE_PATH };

const FORMATS = ["mermaid", "dot", "json"] as const;

/** Output formats of `rein sessions export`. @default "mermaid" */
export type ExportFormat = (typeof FORMATS)[number];

function statusOf(node: SessionNode): string {
  const status = node.metadata["status"];
  return typeof status === "string" ? status : "-";
}

/**
 * `rein sessions ls`: a header, then one line per session, newest first.
 * Throws when the store file does not exist (it never creates one).
 * @example
 * ```ts
 * listSessions(processIo(), { store: ".rein/sessions.db" });
 * ```
 */
export function listSessions(io: CliIo, options: { store?: string }): void {
  withStore(io, options.store, (store) => {
    const sessions = store.listSessions().sort((a, b) => b.updatedAt - a.updatedAt);
    if (sessions.length === 0) {
      io.stdout("No sessions.\n");
      return;
    }
    io.stdout(`${"ID".padEnd(38)} ${"AGENT".padEnd(16)} ${"NODES".padStart(5)}  UPDATED              TITLE\n`);
    for (const session of sessions) {
      io.stdout(
        `${shown(session.id).padEnd(38)} ${shown(session.agentId ?? "-").padEnd(16)} ${String(session.nodeCount).padStart(5)}  ${time(session.updatedAt)}  ${oneLine(session.title, 50)}\n`,
      );
    }
  });
}

/**
 * `rein sessions show <id>`: the session's fields, then its nodes in `seq`
 * order, indented by caller, with their status and a one-line output.
 * @example
 * ```ts
 * showSession(processIo(), "chain-1", {});
 * ```
 */
export function showSession(io: CliIo, id: string, options: { store?: string }): void {
  withStore(io, options.store, (store) => {
    const session = store.getSession(id);
    const nodes = store.readNodes(id);
    io.stdout(`Session ${shown(session.id)}\n`);
    io.stdout(`  agent:   ${shown(session.agentId ?? "-")}\n  title:   ${shown(session.title ?? "-")}\n`);
    io.stdout(`  created: ${time(session.createdAt)}\n  updated: ${time(session.updatedAt)}\n  nodes:   ${session.nodeCount}\n\n`);
    const depthOf = new Map<string, number>();
    for (const node of nodes) {
      const depth = node.caller === null ? 0 : (depthOf.get(node.caller) ?? 0) + 1;
      depthOf.set(node.id, depth);
      const head = node.id === session.headId ? " (head)" : "";
      io.stdout(
        `${String(node.seq).padStart(4)}  ${"  ".repeat(depth)}${node.role} ${shown(node.name)} [${shown(statusOf(node))}]${head}  ${oneLine(node.output)}\n`,
      );
    }
  });
}

/**
 * `rein sessions export <id> --format mermaid|dot|json`: the store's
 * `exportGraph` text on stdout.
 * @example
 * ```ts
 * exportSession(processIo(), "chain-1", { format: "dot" });
 * ```
 */
export function exportSession(io: CliIo, id: string, options: { store?: string; format?: string }): void {
  const format = options.format ?? "mermaid";
  if (!(FORMATS as readonly string[]).includes(format)) {
    throw new CliUsageError(`--format must be one of ${FORMATS.join(", ")}, got '${format}'`);
  }
  withStore(io, options.store, (store) => {
    const text = store.exportGraph(id, { format: format as ExportFormat });
    io.stdout(text.endsWith("\n") ? text : `${text}\n`);
  });
}
