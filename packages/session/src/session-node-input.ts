import type { SessionNode, SessionNodeRole } from "./session-node";
import { snapshotValue, type NodeJson } from "./node-json";

/**
 * A node as handed to `SessionNodeWriter.append`: `seq` and `createdAt` are filled in when missing.
 * @example
 * ```ts
 * const input: SessionNodeInput = { id: "l1", role: "llm", name: "model-a", caller: "c1", output: blocks };
 * ```
 */
export interface SessionNodeInput {
  id: string;
  role: SessionNodeRole;
  name: string;
  /**
   * A proposal: the store allocates `seq` when it commits the node (the
   * proposal stands when it is above every `seq` already in the session).
   * @default the next seq of the session, as this writer knows it
   */
  seq?: number;
  /** @default Date.now() */
  createdAt?: number;
  /** @default undefined */
  input?: unknown;
  /** @default undefined */
  output?: unknown;
  /** @default null */
  caller?: string | null;
  /** @default null */
  predecessor?: string | null;
  /** @default {} */
  metadata?: Readonly<Record<string, unknown>>;
}

/**
 * Checks the numbers a caller may give a node: `seq` a non-negative safe
 * integer (a proposal; the store allocates the final one) and `createdAt`
 * a finite epoch-ms number. Every store keeps them the same way (PostgreSQL
 * as `bigint`): a fraction is truncated at storing, anything else is a
 * `TypeError` here, before it could be queued.
 * @internal
 */
export function checkNodeNumbers(input: SessionNodeInput): void {
  const { seq, createdAt } = input;
  if (seq !== undefined && !(Number.isSafeInteger(seq) && seq >= 0)) {
    throw new TypeError(`SessionNodeWriter.append: node ${input.id}'s seq must be a non-negative integer (or left out: the store allocates it), got ${String(seq)}`);
  }
  if (createdAt !== undefined && !(typeof createdAt === "number" && Number.isFinite(createdAt) && Math.abs(createdAt) <= 8.64e15)) {
    throw new TypeError(`SessionNodeWriter.append: node ${input.id}'s createdAt must be a finite number of epoch ms (or left out: now), got ${String(createdAt)}`);
  }
}

/**
 * The node `input` is stored as, under `seq`, its defaults filled in. Its
 * values are snapshotted as JSON (the text a round trip made is kept in
 * `keeper.json`, for a store that writes text), unless `owned`: then the
 * caller hands over plain JSON data nobody mutates later, kept as is.
 * Throws a `TypeError` when a value to snapshot is not JSON.
 * @internal
 */
export function nodeFromInput(input: SessionNodeInput, seq: number, owned: boolean, keeper: { json: NodeJson | undefined }): SessionNode {
  const id = input.id;
  // Both literals list the fields in one order: one shape for all nodes.
  if (owned) {
    return {
      id,
      seq,
      createdAt: input.createdAt === undefined ? Date.now() : Math.trunc(input.createdAt),
      role: input.role,
      name: input.name,
      input: input.input,
      output: input.output,
      caller: input.caller ?? null,
      predecessor: input.predecessor ?? null,
      metadata: input.metadata ?? {},
    };
  }
  return {
    id,
    seq,
    createdAt: input.createdAt === undefined ? Date.now() : Math.trunc(input.createdAt),
    role: input.role,
    name: input.name,
    input: snapshotValue(input.input, id, "input", keeper),
    output: snapshotValue(input.output, id, "output", keeper),
    caller: input.caller ?? null,
    predecessor: input.predecessor ?? null,
    metadata: (snapshotValue(input.metadata ?? {}, id, "metadata", keeper) ?? {}) as Record<string, unknown>,
  };
}
