import type { SessionCommitResult, SessionWriteOperation } from "./session-store-like";

/**
 * The `seqs` of a commit in which every appended node was stored with the
 * `seq` its writer proposed — the usual case, one writer per session — read
 * from the operations themselves instead of copied into a `Map` per commit
 * (a commit per model request: the copy was a tenth of the cost of
 * recording a turn in memory). Lookups in operation order, as a writer makes
 * them, cost one comparison each; a full `Map` is made only for iteration
 * or a large batch. It is its own {@link SessionCommitResult}: one object
 * per commit.
 * @internal
 */
export class ProposedSeqs implements ReadonlyMap<string, number>, SessionCommitResult {
  /** Where the next lookup starts: the operation after the last one found. */
  private next = 0;
  private map: Map<string, number> | undefined;

  /** @param operations a commit's operations, all of whose appends were stored as proposed. */
  constructor(private readonly operations: readonly SessionWriteOperation[]) {}

  /** This object: the result of the commit is its seqs. */
  get seqs(): ReadonlyMap<string, number> {
    return this;
  }

  get size(): number {
    return this.asMap().size;
  }

  get(id: string): number | undefined {
    if (this.map !== undefined) return this.map.get(id);
    const operations = this.operations;
    const count = operations.length;
    if (count > SCAN_LIMIT) return this.asMap().get(id);
    for (let step = 0; step < count; step++) {
      const index = (this.next + step) % count;
      const operation = operations[index]!;
      if (operation.kind === "append" && operation.node.id === id) {
        this.next = index + 1;
        return operation.node.seq;
      }
    }
    return undefined;
  }

  has(id: string): boolean {
    return this.get(id) !== undefined;
  }

  forEach(callback: (seq: number, id: string, map: ReadonlyMap<string, number>) => void, thisArg?: unknown): void {
    for (const [id, seq] of this.asMap()) callback.call(thisArg, seq, id, this);
  }

  entries(): MapIterator<[string, number]> {
    return this.asMap().entries();
  }

  keys(): MapIterator<string> {
    return this.asMap().keys();
  }

  values(): MapIterator<number> {
    return this.asMap().values();
  }

  [Symbol.iterator](): MapIterator<[string, number]> {
    return this.asMap()[Symbol.iterator]();
  }

  private asMap(): Map<string, number> {
    if (this.map === undefined) {
      this.map = new Map();
      for (const operation of this.operations) if (operation.kind === "append") this.map.set(operation.node.id, operation.node.seq);
    }
    return this.map;
  }
}

/** Batches up to this many operations are searched by a scan; larger ones get a Map. */
const SCAN_LIMIT = 16;
