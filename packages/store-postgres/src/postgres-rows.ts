import { storableJson, storableText, type SessionInfo, type SessionNode, type SessionNodeRole, type SessionWriteOperation } from "@rein/session";

/**
 * What crosses the thread between the Postgres store and its worker: rows
 * as the worker returns them, operations as it takes them.
 * @internal
 */

/** A row as the worker returns it. @internal */
export type Row = unknown[];

/** JSON text for a `jsonb` column: PostgreSQL refuses a NUL or a lone surrogate there, so they are stored as U+FFFD (`storableJson`). */
function encode(value: unknown): string | null {
  return value === undefined ? null : storableJson(JSON.stringify(value));
}

/** A node from its JSON row (see the worker's NODE_JSON): `input` / `output` flagged when SQL NULL (undefined). @internal */
export function nodeFromRow(row: Row): SessionNode {
  return {
    id: row[0] as string,
    seq: row[1] as number,
    createdAt: row[2] as number,
    role: row[3] as SessionNodeRole,
    name: row[4] as string,
    input: row[6] === true ? undefined : row[5],
    output: row[8] === true ? undefined : row[7],
    caller: row[9] as string | null,
    predecessor: row[10] as string | null,
    metadata: row[11] as Record<string, unknown>,
  };
}

/** Nodes from one JSON text of node rows. @internal */
export function nodesFromJson(json: string): SessionNode[] {
  return (JSON.parse(json) as Row[]).map(nodeFromRow);
}

/** A session from `[id, agent_id, title, created_at, updated_at, head_id, last_seq, node_count]`. @internal */
export function sessionFromRow(row: Row): SessionInfo {
  return {
    id: String(row[0]),
    agentId: row[1] === null ? null : String(row[1]),
    title: row[2] === null ? null : String(row[2]),
    createdAt: Number(row[3]),
    updatedAt: Number(row[4]),
    headId: row[5] === null ? null : String(row[5]),
    nodeCount: Number(row[7]),
    lastSeq: Number(row[6]),
  };
}

/**
 * An operation as the worker takes it, plain values and JSON text only: an
 * append is `["a", id, seq, createdAt, role, name, input, output, caller,
 * predecessor, metadata]`, an update `["u", id, name | null, hasInput,
 * input, hasOutput, output, metadataSet | null, metadataRemove | null]`.
 * @internal
 */
export function encodeOperation(operation: SessionWriteOperation): Row {
  if (operation.kind === "append") {
    const node = operation.node;
    return [
      "a",
      node.id,
      node.seq,
      node.createdAt,
      node.role,
      storableText(node.name),
      encode(node.input),
      encode(node.output),
      node.caller,
      node.predecessor,
      encode(node.metadata),
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
    set === null ? null : encode(set),
    remove,
  ];
}
