import type { SessionAppendOptions, SessionNodeInput, SessionNodeWriter } from "@rein/session";

/** A node for {@link SessionCursor.append}: the cursor fills in `caller` and `predecessor`. */
export type CursorNodeInput = Omit<SessionNodeInput, "caller" | "predecessor">;

/**
 * The one owner of a position in a session graph: which call the next node
 * belongs to (`callId`) and which node it follows (`tail`). Appending
 * through the cursor links the node and moves the tail; nobody copies the
 * position around and writes it back.
 *
 * A scoped call owns one cursor for the nodes written directly inside it.
 * A model-tool loop works on a {@link fork} of its call's cursor, so two
 * loops running at once in one call each keep their own branch, and
 * {@link join}s it back when it ends: the call's tail is then the tail of
 * the loop that finished last.
 * @internal
 */
export class SessionCursor {
  constructor(
    readonly writer: SessionNodeWriter,
    /** The code node the cursor's nodes belong to; null at top level. */
    readonly callId: string | null,
    /** The last node written at this position; null before the first. */
    public tail: string | null,
    /**
     * The ids written through this cursor, kept only for a top-level run
     * (`agent.ask()` outside any call): its nodes are each top-level, and
     * the run commits them all before it returns.
     */
    readonly written?: Set<string>,
  ) {}

  /**
   * Writes `node` after the tail, as a child of {@link callId}, and moves
   * the tail to it.
   */
  append(node: CursorNodeInput, options?: SessionAppendOptions): string {
    // Built field by field (not spread): this runs for every recorded call and model turn.
    this.writer.append(
      {
        id: node.id,
        role: node.role,
        name: node.name,
        input: node.input,
        output: node.output,
        metadata: node.metadata,
        caller: this.callId,
        predecessor: this.tail,
      },
      options,
    );
    this.tail = node.id;
    this.written?.add(node.id);
    return node.id;
  }

  /** A new cursor at the same position, for work that may run beside other work of this call. */
  fork(): SessionCursor {
    return new SessionCursor(this.writer, this.callId, this.tail);
  }

  /** Moves this cursor to where `branch` (a {@link fork} of it) ended. */
  join(branch: SessionCursor): void {
    if (branch.tail !== null) this.tail = branch.tail;
  }
}
