/** Who produced a node: the user, a model request, or a scoped code call. */
export type SessionNodeRole = "user" | "llm" | "code";

/** Lifecycle of a code node. */
export type SessionNodeStatus = "running" | "completed" | "error" | "cancelled" | "interrupted" | "paused";

/**
 * One node of a session DAG. A scoped call writes a `code` node on entry
 * (`metadata.status: "running"`, `metadata.doc` = its description) and fills
 * `output` and the status on exit; each model request writes an `llm` node.
 *
 * Edges: `caller` points to the code node of the call this node ran inside
 * (the call tree); `predecessor` points to the node that came before it in
 * the same scope (the conversation spine).
 */
export interface SessionNode {
  /** Unique id within the session. */
  readonly id: string;
  /** Monotonic sequence number within the session (insertion order). */
  readonly seq: number;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly role: SessionNodeRole;
  /** Function name for code nodes (`Researcher.research`), model id for llm nodes. */
  readonly name: string;
  /** JSON-serialisable input (arguments, or the request's new user content). */
  readonly input: unknown;
  /** JSON-serialisable output (return value, or the assistant content). */
  readonly output: unknown;
  /** Id of the enclosing code node, or null at the top. */
  readonly caller: string | null;
  /** Id of the previous node in the same scope, or null. */
  readonly predecessor: string | null;
  /**
   * Free-form metadata. Known keys: `status` (a {@link SessionNodeStatus}),
   * `doc`, `expose`, `error`, `model`, `usage`, `agent`, `durationMs`.
   */
  readonly metadata: Readonly<Record<string, unknown>>;
}
