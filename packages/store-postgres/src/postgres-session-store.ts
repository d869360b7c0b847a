import { randomUUID } from "node:crypto";
import {
  installShutdownFlush,
  type ExportGraphOptions,
  type ReadAncestryOptions,
  type SessionBranch,
  type SessionCommitOptions,
  type SessionCommitResult,
  type SessionCreateOptions,
  type SessionInfo,
  type SessionNode,
  type SessionStoreLike,
  type SessionStoreAsyncReads,
  type SessionWriteOperation,
  type RunLeaseStore,
  type RunLeaseAsyncCalls,
  type ConsumeOnceStore,
  type RunRecord,
  type RunState,
  checkCreateSessionArguments,
  checkNodeId,
  checkSessionId,
  exportGraphOptionsSchema,
  flushPendingWriters,
  flushPendingWritersAsync,
  flushPendingWritersSync,
  releaseSharedWriter,
  releaseSharedWriters,
  storableOrNull,
  renderSessionGraph,
  checkRunArguments,
  runFromRow,
} from "@rein/session";
import { PostgresAsyncWrites } from "./postgres-async-writes";
import { checkTurns, onPoolOf, postgresAsyncCalls, type OnPool } from "./postgres-async-calls";
import { commitOnPool, commitWithRetry, encodeCommit } from "./postgres-commit-paths";
import { PostgresStoreLink } from "./postgres-store-link";
import { nodesFromJson, sessionFromRow, type Row } from "./postgres-rows";
import { resolvePostgresOptions, type PostgresSessionStoreOptions } from "./postgres-store-options";

/**
 * The session store for many processes and machines: sessions and nodes in
 * PostgreSQL tables of one schema, reached through the `pg` driver. Every
 * store (in any process, on any machine) pointed at the same database and
 * schema shares the same sessions; `seq` is allocated inside each commit's
 * transaction under the session row's lock, so N writers on one session
 * never give two nodes one `seq` and never lose a node.
 *
 * The interface is synchronous, like every {@link SessionStoreLike}: the
 * connection lives in a worker thread of the store, and each call waits for
 * its round trip with `Atomics.wait` — the calling thread's event loop waits
 * with it (about one to a few hundred microseconds on a local server, see
 * docs/store-postgres.md). {@link commitWithRetry} is the asynchronous
 * path that never blocks the event loop.
 *
 * On open it creates the schema and its tables when missing (under an
 * advisory lock, so processes opening a fresh database at once do not
 * collide), and refuses untouched a schema from a newer
 * `@rein/store-postgres` ({@link PostgresSchemaVersionError}) or one with
 * tables Rein did not make ({@link PostgresForeignSchemaError}); then it
 * marks `interrupted` the nodes left `running` by stores whose connection is
 * gone (a crash), found through each store's advisory lock
 * ({@link interruptAbandoned}). Nodes of stores still connected, on any
 * machine, are left alone.
 *
 * Faults are typed and never poison the store: an unreachable server or a
 * lost connection is a {@link PostgresConnectionError}, refused credentials
 * a {@link PostgresAuthenticationError}, a lock held too long
 * `SessionStoreBusyError`; every transaction is closed (committed or rolled
 * back) before the error is thrown, and a lost connection is made again on
 * the next call.
 *
 * @example
 * ```ts
 * const store = new PostgresSessionStore({ connectionString: process.env.DATABASE_URL, schema: "rein" });
 * if (!store.hasSession("s1")) store.createSession("s1", { agentId: "Researcher" });
 * const writer = new SessionNodeWriter(store, "s1");
 * // ...
 * store.close();
 * ```
 */
export class PostgresSessionStore implements SessionStoreLike, RunLeaseStore, ConsumeOnceStore {
  /** `postgres://host:port/database (schema rein)`: where the store is; never with the password. */
  readonly location: string;
  /** The schema that holds the store's tables. */
  readonly schema: string;
  /** How long a statement waits for another connection's lock, and {@link commitWithRetry} keeps retrying, in ms. */
  readonly busyTimeoutMs: number;
  /**
   * This store instance's id: the owner of the nodes it appends (for
   * {@link interruptRunning}), and the key of its liveness lock (for
   * {@link interruptAbandoned}).
   */
  private readonly owner = randomUUID();
  /** The way to the store's worker: calls, faults, and whether the store is closed. */
  private readonly link: PostgresStoreLink;
  private readonly uninstallShutdown: (() => void) | undefined;
  /** The asynchronous path's pool, with the `asyncWrites` option. */
  private readonly asyncWrites: PostgresAsyncWrites | undefined;
  /** The worker's operations run on {@link asyncWrites}'s pool, with typed faults; set with it. */
  private readonly onPool: OnPool | undefined;
  /**
   * {@link commit} on the asynchronous path (option `asyncWrites`): the
   * same transaction code on a pooled connection, awaited, never blocking
   * the event loop. A stalled database makes it wait (up to
   * `requestTimeoutMs`), not the process. Undefined without the option.
   *
   * @example
   * ```ts
   * const store = new PostgresSessionStore({ connectionString, asyncWrites: { poolSize: 4 } });
   * const { seqs } = await store.commitAsync!("s1", operations);
   * ```
   */
  readonly commitAsync?: (sessionId: string, operations: readonly SessionWriteOperation[], options?: SessionCommitOptions) => Promise<SessionCommitResult>;
  /** The session reads a run needs before it starts, on the asynchronous path (`asyncWrites`); undefined without the option. */
  readonly asyncReads?: SessionStoreAsyncReads;
  /** The lease calls of a running run, on the asynchronous path (`asyncWrites`); undefined without the option. */
  readonly asyncLeases?: RunLeaseAsyncCalls;

  /**
   * Connects, and creates or checks the schema. Throws a typed error when
   * the server cannot be reached or refuses the credentials, and a
   * `TypeError` naming the option for bad options.
   */
  constructor(options: PostgresSessionStoreOptions = {}) {
    const resolved = resolvePostgresOptions(options);
    this.location = resolved.location;
    this.schema = resolved.schema;
    this.busyTimeoutMs = resolved.busyTimeoutMs;
    this.link = new PostgresStoreLink(resolved, this.owner);
    this.uninstallShutdown = resolved.shutdownFlush ? installShutdownFlush(this) : undefined;
    const poolSize = resolved.asyncPoolSize;
    if (poolSize !== undefined) {
      const onPool = (this.onPool = onPoolOf(this.link, (this.asyncWrites = new PostgresAsyncWrites(resolved, this.owner, poolSize))));
      this.commitAsync = (sessionId, operations, options) => commitOnPool(this.link, onPool, sessionId, operations, options);
      ({ asyncReads: this.asyncReads, asyncLeases: this.asyncLeases } = postgresAsyncCalls(onPool));
    }
  }

  createSession(id: string, options: SessionCreateOptions = {}): SessionInfo {
    checkCreateSessionArguments("PostgresSessionStore.createSession", id, options);
    return sessionFromRow(this.call("createSession", id, storableOrNull(options.agentId), storableOrNull(options.title)) as Row);
  }

  getSession(id: string): SessionInfo {
    checkSessionId("PostgresSessionStore.getSession", id);
    return sessionFromRow(this.call("getSession", id) as Row);
  }

  hasSession(id: string): boolean {
    checkSessionId("PostgresSessionStore.hasSession", id);
    return this.call("hasSession", id) as boolean;
  }

  listSessions(): SessionInfo[] {
    return (this.call("listSessions") as Row[]).map(sessionFromRow);
  }

  /** Deletes the session and its nodes in one statement. */
  deleteSession(id: string): void {
    checkSessionId("PostgresSessionStore.deleteSession", id);
    this.call("deleteSession", id);
    // A session re-created under this id must get a fresh writer, not the deleted one's.
    releaseSharedWriter(this, id);
  }

  head(sessionId: string): string | null {
    checkSessionId("PostgresSessionStore.head", sessionId);
    const head = this.call("head", sessionId);
    return head === null ? null : String(head);
  }

  setHead(sessionId: string, nodeId: string | null): void {
    checkSessionId("PostgresSessionStore.setHead", sessionId);
    checkNodeId("PostgresSessionStore.setHead", nodeId, true);
    this.call("setHead", sessionId, nodeId);
  }

  /** The branch tips and their spine lengths, computed in SQL (the session is not read whole). */
  listBranches(sessionId: string): SessionBranch[] {
    checkSessionId("PostgresSessionStore.listBranches", sessionId);
    const head = this.head(sessionId);
    return (this.call("listBranches", sessionId) as [string, number, number][]).map(([tipId, length, createdAt]) => ({
      tipId,
      length,
      createdAt,
      isHead: tipId === head,
    }));
  }

  exportGraph(sessionId: string, options: ExportGraphOptions = {}): string {
    checkSessionId("PostgresSessionStore.exportGraph", sessionId);
    exportGraphOptionsSchema.parse(options);
    return renderSessionGraph(this.getSession(sessionId), this.readNodes(sessionId), options.format ?? "json");
  }

  /** Every node of the session in `seq` order, read in pages from one snapshot. */
  readNodes(sessionId: string): SessionNode[] {
    checkSessionId("PostgresSessionStore.readNodes", sessionId);
    const nodes: SessionNode[] = [];
    for (const page of this.call("readNodes", sessionId) as string[]) for (const node of nodesFromJson(page)) nodes.push(node);
    return nodes;
  }

  /**
   * The nodes history for a request at `nodeId` can draw on, in `seq`
   * order, selected by one recursive query without reading the session
   * whole: `nodeId` and its caller chain; every node reached from those by
   * `predecessor` links (at most `turns` top-level nodes on the
   * conversation spine, a top-level start node counting); and every node
   * whose caller chain reaches one of those (the call subtrees). Unknown
   * node: `[]`. Cyclic links in damaged data end the query (UNION).
   *
   * @example
   * ```ts
   * const nodes = store.readAncestry("s1", store.head("s1")!, { turns: 20 });
   * ```
   */
  readAncestry(sessionId: string, nodeId: string, options: ReadAncestryOptions = {}): SessionNode[] {
    checkSessionId("PostgresSessionStore.readAncestry", sessionId);
    checkNodeId("PostgresSessionStore.readAncestry", nodeId);
    const turns = checkTurns(options);
    return nodesFromJson(this.call("readAncestry", sessionId, nodeId, turns) as string);
  }

  hasNode(sessionId: string, nodeId: string): boolean {
    checkSessionId("PostgresSessionStore.hasNode", sessionId);
    checkNodeId("PostgresSessionStore.hasNode", nodeId);
    return this.call("hasNode", sessionId, nodeId) as boolean;
  }

  /**
   * Applies the operations in one transaction, with one multi-row write:
   * the session row is locked (`SELECT … FOR UPDATE`), so commits to one
   * session from every process take turns; each appended node is stored
   * with the `seq` it proposes when that is above every `seq` in the
   * session, else with the next one; a top-level append (`caller` null)
   * moves the head; updates merge metadata shallowly (a key set to
   * `undefined` is removed). The same node appended again is ignored and
   * gets no `seq`; another node under a taken id is a
   * `SessionNodeConflictError`, and nothing of the commit is stored. The
   * fenced runs' rows (`options.fences`) are read `FOR SHARE` in the same
   * transaction: a run at another lease epoch is a `LeaseLostError`, and
   * nothing of the commit is stored.
   */
  commit(sessionId: string, operations: readonly SessionWriteOperation[], options?: SessionCommitOptions): SessionCommitResult {
    const commit = encodeCommit("PostgresSessionStore.commit", this.link, sessionId, operations, options);
    if (commit === null) return { seqs: new Map() };
    return { seqs: new Map(this.call("commit", sessionId, commit.operations, false, commit.fences) as [string, number][]) };
  }

  /**
   * {@link commit} that never blocks the event loop: the commit runs in the
   * store's worker while this thread goes on, and a lock held elsewhere
   * (`SessionStoreBusyError`) or a lost connection
   * ({@link PostgresConnectionError}) is retried with backoff (2, 4, 8 … 50
   * ms) until {@link busyTimeoutMs} has passed. A retry after a lost
   * connection is safe: a node the lost attempt did store is found and
   * reported with its stored `seq`. Any other fault rejects at once. The
   * operations are encoded when called. Commits of one session from one
   * writer must not overlap: wait for this one before the next.
   *
   * @example
   * ```ts
   * const { seqs } = await store.commitWithRetry("s1", operations);
   * ```
   */
  commitWithRetry(sessionId: string, operations: readonly SessionWriteOperation[], options?: SessionCommitOptions): Promise<SessionCommitResult> {
    return commitWithRetry(this.link, this.busyTimeoutMs, sessionId, operations, options);
  }

  flush(): void {
    this.link.assertOpen();
    flushPendingWriters(this);
  }

  /**
   * {@link flush} on the synchronous path, with `asyncWrites` too: the commits in flight on the pool are abandoned
   * (their connections closed) and committed again with what is queued behind them. For {@link close} and the shutdown flush.
   */
  flushSync(): void {
    this.link.assertOpen();
    this.asyncWrites?.abandon();
    flushPendingWritersSync(this);
  }

  /**
   * Commits every writer's pending batch and waits for it, in flight
   * included: with `asyncWrites`, the durable commit point (`flush()`
   * only starts the commits). Without it, the same as {@link flush}.
   */
  async flushAsync(): Promise<void> {
    this.link.assertOpen();
    await flushPendingWritersAsync(this);
  }

  /**
   * {@link close} after every queued write is committed ({@link flushAsync}).
   * With `asyncWrites`, it never blocks the event loop: the running nodes are
   * marked interrupted on the pool, and the connections end from the event
   * loop — a stalled database makes it wait (up to `requestTimeoutMs` for
   * the statements, about a second for the store's connection to end), not
   * the process. Without `asyncWrites`, the same as {@link close}. Idempotent.
   */
  async closeAsync(): Promise<void> {
    if (this.link.closed) return;
    const onPool = this.onPool;
    if (onPool === undefined) return this.close();
    try {
      // A commit that failed is tried once more, as close() commits what is kept.
      await this.flushAsync().catch(() => this.flushAsync());
      await onPool("interruptRunning");
    } finally {
      this.letGo();
      await this.link.endAsync();
      await this.asyncWrites?.end().catch(() => undefined);
    }
  }

  /** See `ConsumeOnceStore.consumeOnce`: one INSERT, its primary key the check. */
  consumeOnce(sessionId: string, key: string): boolean {
    checkSessionId("PostgresSessionStore.consumeOnce", sessionId);
    if (typeof key !== "string" || key === "") throw new TypeError("PostgresSessionStore.consumeOnce(sessionId, key): key must be a non-empty string");
    return this.call("consumeOnce", sessionId, key, Date.now()) as boolean;
  }

  registerRun(runId: string, sessionId: string, name: string, leaseMs: number): void {
    checkRunArguments("PostgresSessionStore.registerRun", runId, leaseMs);
    checkSessionId("PostgresSessionStore.registerRun", sessionId);
    this.call("registerRun", runId, sessionId, name, leaseMs, Date.now());
  }

  /**
   * See `RunLeaseStore.claimRun`: a holder whose store's connection ended
   * (found through its liveness lock, as {@link interruptAbandoned} does)
   * frees the lease at once, on any machine. Expiry uses the claimant's
   * clock: keep the machines' clocks in step to well within the lease.
   */
  claimRun(runId: string, states: readonly RunState[], leaseMs: number, fromEpoch?: number): boolean {
    checkRunArguments("PostgresSessionStore.claimRun", runId, leaseMs, states, fromEpoch);
    return this.call("claimRun", runId, states, leaseMs, Date.now(), fromEpoch ?? null) as boolean;
  }

  renewRun(runId: string, leaseMs: number, epoch?: number): boolean {
    checkRunArguments("PostgresSessionStore.renewRun", runId, leaseMs, undefined, epoch);
    return this.call("renewRun", runId, leaseMs, Date.now(), epoch ?? null) as boolean;
  }

  releaseRun(runId: string, state: RunState, reason: string | null, epoch?: number): void {
    checkRunArguments("PostgresSessionStore.releaseRun", runId, undefined, [state], epoch);
    this.call("releaseRun", runId, state, reason, Date.now(), epoch ?? null);
  }

  getRun(runId: string): RunRecord | undefined {
    checkRunArguments("PostgresSessionStore.getRun", runId);
    const found = this.call("getRun", runId) as unknown[] | undefined;
    return found === undefined ? undefined : runFromRow(found);
  }

  listRuns(states?: readonly RunState[]): RunRecord[] {
    checkRunArguments("PostgresSessionStore.listRuns", "all", undefined, states);
    return (this.call("listRuns", states ?? null) as unknown[][]).map(runFromRow);
  }

  /** Marks this store's own running nodes `interrupted` (at shutdown; {@link close} does it). */
  interruptRunning(): number {
    return this.call("interruptRunning") as number;
  }

  /**
   * Marks `interrupted` the nodes left `running` by stores that are gone, in
   * any process on any machine, and returns how many. Each store holds a
   * session-level advisory lock on its owner id for as long as its
   * connection lives; an owner whose lock can be taken has lost its
   * connection (the process died, or its connection dropped and was not made
   * again), so its running nodes are marked. Nodes of stores still connected
   * are left alone. Runs when the store opens; call it again to sweep up
   * after stores that died since (a long-running server, say, every few
   * minutes).
   *
   * @example
   * ```ts
   * setInterval(() => store.interruptAbandoned(), 5 * 60_000).unref();
   * ```
   */
  interruptAbandoned(): number {
    return this.call("interruptAbandoned") as number;
  }

  /**
   * Commits pending writers ({@link flushSync}), marks this store's running nodes interrupted, then ends the
   * connections and the worker thread. Idempotent. A fault of the final commit is thrown after the store is closed.
   */
  close(): void {
    if (this.link.closed) return;
    try {
      this.flushSync();
      this.interruptRunning();
    } finally {
      this.letGo();
      // Commits in flight finish first; the pool then ends.
      void this.asyncWrites?.end().catch(() => undefined);
      this.link.end();
    }
  }

  /** From now on every call fails closed; the store's writers and its shutdown flush let go. */
  private letGo(): void {
    this.link.markClosed();
    releaseSharedWriters(this);
    this.uninstallShutdown?.();
  }

  private call(op: string, ...args: unknown[]): unknown {
    return this.link.call(op, ...args);
  }
}
