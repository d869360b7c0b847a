/**
 * What a store offers for things that may happen once across every
 * process using it — a paused turn's continuation is resumed once. The
 * built-in stores (in-memory, SQLite, Postgres) implement it; the check
 * and the record are one atomic write, so of several processes consuming
 * one key at once exactly one succeeds.
 * @example
 * ```ts
 * if (isConsumeOnceStore(store) && !store.consumeOnce("s1", "continuation:abc")) throw new Error("already resumed");
 * ```
 */
export interface ConsumeOnceStore {
  /**
   * Records `key` (in session `sessionId`) as consumed and returns true;
   * returns false, writing nothing, when it already was. Deleting the
   * session forgets its keys.
   */
  consumeOnce(sessionId: string, key: string): boolean;
}

/**
 * True when `store` can consume keys once ({@link ConsumeOnceStore}).
 * @example
 * ```ts
 * if (isConsumeOnceStore(store)) store.consumeOnce(sessionId, key);
 * ```
 */
export function isConsumeOnceStore(store: object): store is ConsumeOnceStore {
  return typeof (store as Partial<ConsumeOnceStore>).consumeOnce === "function";
}
