import { InMemorySessionStore } from "@rein/session";
import type { SessionCommitResult, SessionWriteOperation } from "@rein/session";

/**
 * An in-memory store whose commits fail on demand, for tests of what a
 * writer does with a failed commit: `failAt` lists commit attempts (1-based)
 * that throw; `refuse` makes every commit it accepts throw (a batch the
 * store keeps refusing, or a fault that lasts) until it is unset.
 */
export class FaultyStore extends InMemorySessionStore {
  /** Commit attempts so far. */
  attempts = 0;
  /** Commit attempts that threw. */
  failures = 0;
  readonly failAt = new Set<number>();
  refuse: ((operations: readonly SessionWriteOperation[]) => boolean) | undefined;

  /** Makes the next commit attempt throw. */
  failNext(): void {
    this.failAt.add(this.attempts + 1);
  }

  override commit(sessionId: string, operations: readonly SessionWriteOperation[]): SessionCommitResult {
    const attempt = ++this.attempts;
    if (this.failAt.has(attempt) || this.refuse?.(operations) === true) {
      this.failures++;
      throw new Error(`disk full (injected fault, commit ${attempt})`);
    }
    return super.commit(sessionId, operations);
  }
}

/** True when a commit appends a node whose input mentions `text`. */
export function appendsInputWith(text: string): (operations: readonly SessionWriteOperation[]) => boolean {
  return (operations) =>
    operations.some((operation) => operation.kind === "append" && JSON.stringify(operation.node.input ?? null).includes(text));
}
