import type { SessionNode } from "./session-node";
import type { SessionNodeUpdate } from "./session-store-like";

/** `changes` merged into `base`, dropping the keys `changes` sets to undefined; built without `delete`, which would slow the object down for good. */
function mergeRemoving(base: Readonly<Record<string, unknown>>, changes: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const [key, value] of Object.entries({ ...base, ...changes })) {
    if (value !== undefined) Object.defineProperty(merged, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return merged;
}

/**
 * Metadata after an update: `changes` merged shallowly into `base`, a key
 * set to `undefined` removed.
 * @internal
 */
export function mergeMetadata(
  base: Readonly<Record<string, unknown>>,
  changes: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  for (const key in changes) if (changes[key] === undefined) return mergeRemoving(base, changes);
  return { ...base, ...changes };
}

/**
 * The node after an update: `metadata` merged (see {@link mergeMetadata}),
 * the other given fields replaced. Stores and the writer apply updates the
 * same way.
 * @internal
 */
export function applyUpdate(node: SessionNode, fields: SessionNodeUpdate): SessionNode {
  // Same field order as every other node literal: one shape for all nodes.
  return {
    id: node.id,
    seq: node.seq,
    createdAt: node.createdAt,
    role: node.role,
    name: fields.name ?? node.name,
    input: "input" in fields ? fields.input : node.input,
    output: "output" in fields ? fields.output : node.output,
    caller: node.caller,
    predecessor: node.predecessor,
    metadata: fields.metadata === undefined ? node.metadata : mergeMetadata(node.metadata, fields.metadata),
  };
}

/**
 * Two queued updates of one node folded into one: later fields win,
 * metadata merges and keeps its removal markers (`undefined` values).
 * @internal
 */
export function mergeUpdate(into: SessionNodeUpdate, fields: SessionNodeUpdate): SessionNodeUpdate {
  const merged: SessionNodeUpdate = { ...into, ...fields };
  if (into.metadata !== undefined || fields.metadata !== undefined) {
    merged.metadata = { ...into.metadata, ...fields.metadata };
  }
  return merged;
}

/**
 * `node` with the `seq` its store gave it (a writer proposes one; the
 * store allocates it).
 * @internal
 */
export function withSeq(node: SessionNode, seq: number): SessionNode {
  // Same field order as every other node literal: one shape for all nodes.
  return {
    id: node.id,
    seq,
    createdAt: node.createdAt,
    role: node.role,
    name: node.name,
    input: node.input,
    output: node.output,
    caller: node.caller,
    predecessor: node.predecessor,
    metadata: node.metadata,
  };
}
