import type { SessionNode } from "./session-node";
import type { ReadAncestryOptions } from "./ancestry";
import type { LeaseFence } from "./lease-fence";

/**
 * Options of {@link SessionStoreLike.createSession}.
 * @example
 * ```ts
 * store.createSession("s1", { agentId: "Researcher", title: "Find sources" });
 * ```
 */
export interface SessionCreateOptions {
  /** The agent the session belongs to (class name or a user id). @default null */
  agentId?: string | null;
  /** A human-readable title. @default null */
  title?: string | null;
}

/**
 * A session as a store reports it.
 * @example
 * ```ts
 * const { headId, nodeCount } = store.getSession("s1");
 * ```
 */
export interface SessionInfo {
  readonly id: string;
  readonly agentId: string | null;
  readonly title: string | null;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  /** Epoch milliseconds of the last committed write. */
  readonly updatedAt: number;
  /** The node the next top-level call continues from, or null for an empty session. */
  readonly headId: string | null;
  /** How many nodes the session holds. */
  readonly nodeCount: number;
  /** The highest `seq` committed in the session, or -1 when it is empty. */
  readonly lastSeq: number;
}

/**
 * One branch of a session: a top-level node (`caller === null`) that no
 * node names as its `predecessor`, i.e. a leaf of the top-level
 * conversation spine. Two calls started from the same head make two
 * branches.
 * @example
 * ```ts
 * const current = store.listBranches("s1").find((branch) => branch.isHead);
 * ```
 */
export interface SessionBranch {
  /** The leaf node; pass it to `setHead` to continue this branch. */
  readonly tipId: string;
  /** Number of top-level nodes on the spine ending at the tip. */
  readonly length: number;
  /** Epoch milliseconds of the tip. */
  readonly createdAt: number;
  /** True when the session head is this tip. */
  readonly isHead: boolean;
}

/** Output formats of {@link SessionStoreLike.exportGraph}. */
export type SessionGraphFormat = "json" | "mermaid" | "dot";

/**
 * Options of {@link SessionStoreLike.exportGraph}.
 * @example
 * ```ts
 * store.exportGraph("s1", { format: "mermaid" });
 * ```
 */
export interface ExportGraphOptions {
  /** @default "json" */
  format?: SessionGraphFormat;
}

/**
 * Fields a {@link SessionNodeUpdate} may change. `metadata` is merged
 * shallowly into the stored metadata (a key set to `undefined` is removed);
 * the other fields replace the stored value.
 * @example
 * ```ts
 * writer.update("c1", { output: "done", metadata: { status: "completed" } });
 * ```
 */
export interface SessionNodeUpdate {
  name?: string;
  input?: unknown;
  output?: unknown;
  metadata?: Readonly<Record<string, unknown>>;
}

/**
 * One queued write, as a {@link SessionNodeWriter} hands it to a store.
 * @example
 * ```ts
 * store.commit("s1", [{ kind: "update", id: "c1", fields: { metadata: { status: "completed" } } }]);
 * ```
 */
export type SessionWriteOperation =
  | { readonly kind: "append"; readonly node: SessionNode }
  | { readonly kind: "update"; readonly id: string; readonly fields: SessionNodeUpdate };

/**
 * Options of {@link SessionStoreLike.commit}.
 * @example
 * ```ts
 * store.commit("s1", operations, { fences: [{ runId: "r1", epoch: 2 }] });
 * ```
 */
export interface SessionCommitOptions {
  /**
   * The run leases the commit is made under: the store checks, in the
   * commit's transaction, that each run's lease epoch is still the one
   * given, and otherwise refuses the whole commit with a
   * {@link LeaseLostError} (nothing of it is stored). A run the store does
   * not hold refuses it too.
   * @default none: the commit is not fenced
   */
  fences?: readonly LeaseFence[];
}

/**
 * What a {@link SessionStoreLike.commit} did.
 * @example
 * ```ts
 * const { seqs } = store.commit("s1", operations);
 * seqs.get("n1"); // the seq node n1 was stored with
 * ```
 */
export interface SessionCommitResult {
  /** The `seq` each node appended by this commit was stored with, by id (nodes already stored are absent). */
  readonly seqs: ReadonlyMap<string, number>;
}

/**
 * What a session store provides: both {@link SessionStore} (SQLite) and
 * {@link InMemorySessionStore} implement it, and a writer works with either.
 *
 * Head rule: appending a top-level node (`caller === null`) makes it the
 * session head; `setHead` moves the head explicitly (to branch).
 *
 * @example
 * ```ts
 * function openStore(test: boolean): SessionStoreLike {
 *   return test ? new InMemorySessionStore() : new SessionStore();
 * }
 * ```
 */
export interface SessionStoreLike {
  /** The database file, `":memory:"`, or `"in-memory store"`; used in error messages. */
  readonly location: string;
  /**
   * Optional: the reads a run needs before it starts, without blocking the
   * event loop, on a store with an asynchronous path (the Postgres store's
   * `asyncWrites`). `SessionNodeWriter.open` and `readAhead` use them.
   * @default absent: those reads are the synchronous methods
   */
  readonly asyncReads?: SessionStoreAsyncReads;
  /** Creates an empty session. Throws {@link SessionExistsError} when the id is taken. */
  createSession(id: string, options?: SessionCreateOptions): SessionInfo;
  /** Throws {@link SessionNotFoundError} when the id is unknown. */
  getSession(id: string): SessionInfo;
  /** True when the session exists. */
  hasSession(id: string): boolean;
  /** Every session, most recently updated first. */
  listSessions(): SessionInfo[];
  /** Deletes a session and its nodes. Throws {@link SessionNotFoundError} when the id is unknown. */
  deleteSession(id: string): void;
  /** The session head, or null for an empty session. */
  head(sessionId: string): string | null;
  /** Moves the head to `nodeId` (null: the next call starts a new root). */
  setHead(sessionId: string, nodeId: string | null): void;
  /** The leaves of the top-level spine, oldest first. */
  listBranches(sessionId: string): SessionBranch[];
  /** The session graph as JSON, a Mermaid flowchart or Graphviz dot. */
  exportGraph(sessionId: string, options?: ExportGraphOptions): string;
  /** Every committed node of the session in `seq` order. */
  readNodes(sessionId: string): SessionNode[];
  /**
   * The committed nodes history for a request at `nodeId` can draw on, in
   * `seq` order, without reading the whole session: the node and its
   * caller chain, every node reached from those by `predecessor` links (at
   * most `turns` top-level nodes on the conversation spine), and the call
   * subtree of every such spine node. An unknown node id gives `[]`.
   */
  readAncestry(sessionId: string, nodeId: string, options?: ReadAncestryOptions): SessionNode[];
  /** True when the session holds a committed node with this id. */
  hasNode(sessionId: string, nodeId: string): boolean;
  /**
   * Applies the operations in one transaction: appends are idempotent on id
   * (the first write wins), updates merge metadata. The `seq` of each
   * appended node is allocated INSIDE the write transaction (the `seq` a
   * writer proposes is only a hint), so writers in several processes never
   * give two nodes one `seq`; the result says which `seq` each node got.
   * With `options.fences`, the commit is refused whole
   * ({@link LeaseLostError}) unless every fenced run's lease epoch is still
   * the one given, checked in the same transaction.
   */
  commit(sessionId: string, operations: readonly SessionWriteOperation[], options?: SessionCommitOptions): SessionCommitResult;
  /**
   * Optional: {@link commit} without blocking the event loop (the same
   * transaction, the same `seq`, fence and conflict rules), on a store
   * that has an asynchronous path. The operations are encoded when called,
   * so later changes to them do not reach this commit. A
   * `SessionNodeWriter` that finds it commits with it; commits of one
   * writer never overlap.
   * @default absent: writers commit synchronously
   */
  readonly commitAsync?: (sessionId: string, operations: readonly SessionWriteOperation[], options?: SessionCommitOptions) => Promise<SessionCommitResult>;
  /** Commits the pending batches of every writer on this store. */
  flush(): void;
  /**
   * Optional, on a store with {@link commitAsync}: commits the pending
   * batches of every writer on this store on the synchronous path, the
   * commits in flight on the asynchronous path included — which the store
   * abandons first (it closes their connections, so the database rolls
   * back what had not gone in). For a process that is exiting, whose
   * asynchronous commits would never finish: the shutdown flush
   * (`installShutdownFlush`) calls it in place of {@link flush}.
   * @default absent: the shutdown flush calls {@link flush}
   */
  flushSync?(): void;
  /**
   * Marks this store's `running` nodes `interrupted` (used at shutdown).
   * Returns how many nodes changed.
   */
  interruptRunning(): number;
  /** Flushes pending writers and releases the store. */
  close(): void;
}

/**
 * The reads of {@link SessionStoreLike} a store with an asynchronous path
 * also offers awaited, never blocking the event loop: what a run needs
 * before it starts (the session, created when missing; its head; the
 * history behind it) and what a server's read routes answer with. Same
 * results and errors as the synchronous methods.
 * @example
 * ```ts
 * const head = await store.asyncReads?.head("s1");
 * ```
 */
export interface SessionStoreAsyncReads {
  /** {@link SessionStoreLike.getSession}, awaited. */
  getSession(id: string): Promise<SessionInfo>;
  /** {@link SessionStoreLike.hasSession}, awaited. */
  hasSession(id: string): Promise<boolean>;
  /** {@link SessionStoreLike.readNodes}, awaited. */
  readNodes(sessionId: string): Promise<SessionNode[]>;
  /** {@link SessionStoreLike.createSession}, awaited. */
  createSession(id: string, options?: SessionCreateOptions): Promise<SessionInfo>;
  /** {@link SessionStoreLike.head}, awaited. */
  head(sessionId: string): Promise<string | null>;
  /** {@link SessionStoreLike.readAncestry}, awaited. */
  readAncestry(sessionId: string, nodeId: string, options?: ReadAncestryOptions): Promise<SessionNode[]>;
  /** {@link SessionStoreLike.listSessions}, awaited. Optional (added later): without it the synchronous method is used. */
  listSessions?(): Promise<SessionInfo[]>;
  /** {@link SessionStoreLike.exportGraph}, awaited. Optional (added later): without it the synchronous method is used. */
  exportGraph?(sessionId: string, options?: ExportGraphOptions): Promise<string>;
}
