import type { SessionNode, SessionNodeRole } from "./session-node";
import type { SessionInfo, SessionWriteOperation } from "./session-store-like";
import type { EncodedOperation } from "./sqlite-session-worker";
import type { LeaseFence } from "./lease-fence";
import { nodeJsonOf } from "./node-json";
import { storableText } from "./storable-text";

/**
 * What crosses the thread between the SQLite store and its worker: rows as
 * the worker returns them, operations as it takes them.
 * @internal
 */

/** A row as the worker returns it. @internal */
export type Row = unknown[];

function encode(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value);
}

/** A node from its JSON row: values already parsed; `input` / `output` flagged when SQL NULL (undefined). */
export function nodeFromRow(row: Row): SessionNode {
  return {
    id: row[0] as string,
    seq: row[1] as number,
    createdAt: row[2] as number,
    role: row[3] as SessionNodeRole,
    name: row[4] as string,
    input: row[6] === 1 ? undefined : row[5],
    output: row[8] === 1 ? undefined : row[7],
    caller: row[9] as string | null,
    predecessor: row[10] as string | null,
    metadata: row[11] as Record<string, unknown>,
  };
}

/** Nodes read per request to the worker. */
export const READ_PAGE = 20_000;

export function sessionFromRow(row: Row): SessionInfo {
  return {
    id: String(row[0]),
    agentId: row[1] === null ? null : String(row[1]),
    title: row[2] === null ? null : String(row[2]),
    createdAt: Number(row[3]),
    updatedAt: Number(row[4]),
    headId: row[5] === null ? null : String(row[5]),
    lastSeq: Number(row[6]),
    nodeCount: Number(row[7]),
  };
}

/** An operation as the worker takes it: plain values and JSON text only. */
export function encodeOperation(operation: SessionWriteOperation): EncodedOperation {
  if (operation.kind === "append") {
    const node = operation.node;
    const json = nodeJsonOf(operation);
    const status = node.metadata["status"];
    return [
      "a",
      node.id,
      node.createdAt,
      node.role,
      storableText(node.name),
      json?.input ?? encode(node.input),
      json?.output ?? encode(node.output),
      node.caller,
      node.predecessor,
      json?.metadata ?? JSON.stringify(node.metadata),
      typeof status === "string" ? status : null,
    ];
  }
  const { fields } = operation;
  let set: Record<string, unknown> | null = null;
  let remove: string[] | null = null;
  if (fields.metadata !== undefined) {
    for (const key of Object.keys(fields.metadata)) {
      const value = fields.metadata[key];
      if (value === undefined) (remove ??= []).push(key);
      else (set ??= {})[key] = value;
    }
  }
  return [
    "u",
    operation.id,
    fields.name === undefined ? null : storableText(fields.name),
    "input" in fields,
    "input" in fields ? encode(fields.input) : null,
    "output" in fields,
    "output" in fields ? encode(fields.output) : null,
    set === null ? null : JSON.stringify(set),
    remove,
  ];
}

/** Fences as the worker takes them: `[runId, epoch]` pairs, or null for none. @internal */
export function encodeFences(fences: readonly LeaseFence[]): (readonly [string, number])[] | null {
  return fences.length === 0 ? null : fences.map((fence) => [fence.runId, fence.epoch] as const);
}
