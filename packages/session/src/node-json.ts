import type { SessionWriteOperation } from "./session-store-like";
import type { SessionNode } from "./session-node";
import type { LeaseFence } from "./run-leases";

/**
 * JSON text of a queued node's values, where the writer had to make it
 * anyway (a nested value is snapshotted by a JSON round trip). A field is
 * absent when no text was made — a scalar, a flat copy or an owned value —
 * and a store that writes text serialises that value itself.
 */
export interface NodeJson {
  input?: string;
  output?: string;
  metadata?: string;
}

/**
 * A queued append as the writer holds it until commit. The text travels
 * with the operation, not with the node: it is dropped with the batch, so
 * nothing outlives the commit (a store that keeps nodes in memory never
 * pays for it).
 * @internal
 */
export interface QueuedAppend {
  readonly kind: "append";
  readonly id: string;
  node: SessionNode;
  json: NodeJson | undefined;
  /** The run lease the node is written under (see `SessionAppendOptions.fence`). */
  fence: LeaseFence | undefined;
}

/**
 * The JSON text the writer made for an append, if any.
 * @internal
 */
export function nodeJsonOf(operation: SessionWriteOperation): NodeJson | undefined {
  return operation.kind === "append" ? (operation as Partial<QueuedAppend>).json : undefined;
}

/** Returned by {@link flatCopy} for a value that needs a JSON round trip. */
const NESTED: unique symbol = Symbol("nested");

/** Strings, finite numbers, booleans and null are their own snapshot: no round trip needed. */
function isJsonScalar(value: unknown): boolean {
  const type = typeof value;
  return value === null || type === "string" || type === "boolean" || (type === "number" && Number.isFinite(value));
}

/**
 * What a JSON round trip of `value` gives, made by copying when the value is
 * flat: undefined, a scalar, a plain array of scalars, or a plain object
 * whose values are scalars (undefined-valued keys dropped as JSON drops
 * them, or kept when `keepUndefined`). Anything else is {@link NESTED}.
 */
function flatCopy(value: unknown, keepUndefined: boolean): unknown {
  if (value === undefined || isJsonScalar(value)) return value;
  if (typeof value !== "object") return NESTED;
  const prototype = Object.getPrototypeOf(value);
  if (prototype === Array.prototype) {
    const array = value as readonly unknown[];
    for (let index = 0; index < array.length; index++) if (!isJsonScalar(array[index])) return NESTED;
    return array.slice();
  }
  if (prototype !== Object.prototype) return NESTED;
  const copy: Record<string, unknown> = {};
  for (const key in value) {
    // Assigning "__proto__" would set the prototype; JSON.parse makes it an own key.
    if (key === "__proto__") return NESTED;
    const item = (value as Record<string, unknown>)[key];
    if (item === undefined) {
      if (keepUndefined) copy[key] = undefined;
    } else if (isJsonScalar(item)) copy[key] = item;
    else return NESTED;
  }
  return copy;
}

/** JSON text of a value (undefined for what JSON skips); throws a TypeError naming the node and field when it is not JSON. */
function serialise(value: unknown, nodeId: string, field: string): string | undefined {
  try {
    return JSON.stringify(value);
  } catch (cause) {
    throw new TypeError(`Session node '${nodeId}' ${field} is not JSON-serialisable: ${(cause as Error).message}`, { cause });
  }
}

/**
 * The snapshot of one value of node `nodeId`: what a JSON round trip gives,
 * without the round trip for flat values. When a round trip was needed and
 * a `keeper` is given, the text is kept in its `json` for the store. Throws
 * a `TypeError` when the value is not JSON.
 * @internal
 */
export function snapshotValue(
  value: unknown,
  nodeId: string,
  field: keyof NodeJson,
  keeper?: { json: NodeJson | undefined },
): unknown {
  const copy = flatCopy(value, false);
  if (copy !== NESTED) return copy;
  const text = serialise(value, nodeId, field);
  if (text === undefined) return undefined;
  if (keeper !== undefined) (keeper.json ??= {})[field] = text;
  return JSON.parse(text);
}

/**
 * The snapshot of an update's metadata: like {@link snapshotValue}, but a
 * key set to `undefined` (meaning "remove this key") is kept.
 * @internal
 */
export function snapshotChanges(metadata: Readonly<Record<string, unknown>>, nodeId: string): Record<string, unknown> {
  const copy = flatCopy(metadata, true);
  if (copy !== NESTED) return copy as Record<string, unknown>;
  const snapshot = JSON.parse(serialise(metadata, nodeId, "metadata") ?? "{}") as Record<string, unknown>;
  for (const key in metadata) if (metadata[key] === undefined) snapshot[key] = undefined;
  return snapshot;
}
