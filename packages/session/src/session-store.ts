import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { randomUUID } from "node:crypto";
import type { SessionNode } from "./session-node";
import { storableOrNull } from "./storable-text";
import type {
  ExportGraphOptions,
  SessionBranch,
  SessionCommitOptions,
  SessionCommitResult,
  SessionCreateOptions,
  SessionInfo,
  SessionStoreLike,
  SessionWriteOperation,
} from "./session-store-like";
import { SessionGraph } from "./session-graph";
import type { ConsumeOnceStore } from "./consume-once";
import type { ReadAncestryOptions } from "./ancestry";
import { branchesOf } from "./session-branches";
import { renderSessionGraph } from "./export-graph";
import { SessionStoreBusyError, SessionStoreClosedError } from "./session-errors";
import { REIN_APPLICATION_ID, SESSION_MIGRATIONS } from "./session-schema";
import { checkRunArguments, commitFences, runFromRow, type RunLeaseStore, type RunRecord, type RunRow, type RunState } from "./run-leases";
import { flushPendingWriters, releaseSharedWriter, releaseSharedWriters } from "./writer-registry";
import { installShutdownFlush } from "./shutdown-flush";
import { SqliteConnection } from "./sqlite-connection";
import { encodeFences, encodeOperation, nodeFromRow, READ_PAGE, sessionFromRow, type Row } from "./sqlite-rows";
import { makeStoreDirectory, storeFault } from "./session-store-faults";
import {
  checkCreateSessionArguments,
  checkNodeId,
  checkSessionId,
  exportGraphOptionsSchema,
  readAncestryOptionsSchema,
} from "./session-arguments";
import { sessionStoreOptionsSchema, type SessionStoreOptions } from "./session-store-options";
import type { SqliteCommitReply as CommitReply } from "./sqlite-worker-protocol";
import { SqliteHeadCache } from "./sqlite-head-cache";
import { retryThroughLocks, writeThroughLocks } from "./sqlite-lock-wait";

/** The longest a synchronous call waits for another connection's write lock, in ms. */
export const BUSY_ATTEMPT_MS = 20;

/**
 * The lease-owner ids of the SessionStores open in this process. A lease
 * held by this host and this pid under an id not among them belongs to an
 * earlier process that had the same pid (a container restarted as pid 1),
 * or to a store closed here: it is free.
 */
const openStores = new Set<string>();

/**
 * The persistent session store: an embedded SQLite database (through
 * `libsql`) in WAL mode, so other connections and processes read committed
 * nodes while one writes. The schema is versioned in `rein_migrations`.
 *
 * The connection lives in a worker thread of its own (see
 * `sqlite-session-worker.ts`): calls stay synchronous, a store waits for a
 * lock without blocking the event loop for long, and `close()` releases
 * every file handle at once.
 *
 * On open it refuses, untouched, a file that is not SQLite
 * ({@link SessionStoreCorruptError}), a database Rein did not create
 * ({@link ForeignDatabaseError}) or one from a newer Rein
 * ({@link SessionSchemaVersionError}); then it marks `interrupted` the nodes
 * left `running` by a process that no longer exists (a crash). Nodes still
 * `running` in a live process on this host, or on another host, are left
 * alone.
 *
 * Faults are typed and never poison the store: a lock held elsewhere is a
 * {@link SessionStoreBusyError}, an unwritable file or directory a
 * {@link SessionStoreReadOnlyError} or {@link SessionStoreDirectoryError}, a
 * full disk a {@link SessionStoreDiskFullError}; every transaction is closed
 * before the error is thrown, so the same store works again once the cause
 * is gone.
 *
 * The caller owns the store and closes it; `close()` commits pending writes,
 * marks this store's own running nodes interrupted, checkpoints the WAL and
 * releases the file.
 *
 * @example
 * ```ts
 * const store = new SessionStore({ path: ".rein/sessions.db" });
 * store.createSession("s1", { agentId: "Researcher", title: "Find sources" });
 * const writer = new SessionNodeWriter(store, "s1");
 * // ...
 * store.close();
 * ```
 */
export class SessionStore implements SessionStoreLike, RunLeaseStore, ConsumeOnceStore {
  /** Absolute path of the database file, or `":memory:"`. */
  readonly location: string;
  /** How long {@link commitWithRetry} retries a locked database, in ms. */
  readonly busyTimeoutMs: number;
  private readonly attemptMs: number;
  private readonly connection: SqliteConnection;
  private readonly uninstallShutdown: (() => void) | undefined;
  private closed = false;
  /** Heads this store read or committed, with the WAL stamp they are current for. */
  private readonly heads: SqliteHeadCache;
  /** This store's id as the owner of run leases. */
  private readonly ownerStore = randomUUID();

  constructor(options: SessionStoreOptions = {}) {
    sessionStoreOptionsSchema.parse(options);
    const path = options.path ?? join(process.cwd(), ".rein", "sessions.db");
    const inMemory = path === ":memory:";
    this.location = inMemory ? path : resolve(path);
    this.busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    this.attemptMs = Math.min(BUSY_ATTEMPT_MS, this.busyTimeoutMs);
    if (!inMemory) makeStoreDirectory(this.location);
    this.heads = new SqliteHeadCache(this.location);
    try {
      this.connection = new SqliteConnection({
        location: this.location,
        attemptTimeoutMs: this.attemptMs,
        openTimeoutMs: this.busyTimeoutMs,
        migrations: SESSION_MIGRATIONS,
        applicationId: REIN_APPLICATION_ID,
        ownerHost: hostname(),
        ownerPid: process.pid,
        ownerStore: this.ownerStore,
      });
    } catch (error) {
      // The open waited for a lock up to busyTimeoutMs, not one attempt.
      throw storeFault(error, this.location, this.busyTimeoutMs);
    }
    openStores.add(this.ownerStore);
    this.uninstallShutdown = (options.shutdownFlush ?? !inMemory) ? installShutdownFlush(this) : undefined;
  }

  createSession(id: string, options: SessionCreateOptions = {}): SessionInfo {
    checkCreateSessionArguments("SessionStore.createSession", id, options);
    return sessionFromRow(this.call("createSession", id, storableOrNull(options.agentId), storableOrNull(options.title), Date.now()) as Row);
  }

  getSession(id: string): SessionInfo {
    checkSessionId("SessionStore.getSession", id);
    return sessionFromRow(this.call("getSession", id) as Row);
  }

  hasSession(id: string): boolean {
    checkSessionId("SessionStore.hasSession", id);
    return this.call("hasSession", id) as boolean;
  }

  listSessions(): SessionInfo[] {
    return (this.call("listSessions") as Row[]).map(sessionFromRow);
  }

  deleteSession(id: string): void {
    checkSessionId("SessionStore.deleteSession", id);
    this.call("deleteSession", id);
    // A session re-created under this id must get a fresh writer, not the deleted one's.
    releaseSharedWriter(this, id);
  }

  /**
   * The session head. Read from the database unless nothing was committed
   * (by any connection) since this store last saw it: the WAL-index header
   * in the `-shm` file changes with every commit, so comparing it costs one
   * small file read instead of a round trip to the database.
   */
  head(sessionId: string): string | null {
    checkSessionId("SessionStore.head", sessionId);
    const known = this.closed ? undefined : this.heads.current(sessionId);
    if (known !== undefined) return known;
    const [head, stamp] = this.call("head", sessionId) as [string | null, string | null];
    this.rememberHead(sessionId, head, stamp);
    return head;
  }

  setHead(sessionId: string, nodeId: string | null): void {
    checkSessionId("SessionStore.setHead", sessionId);
    checkNodeId("SessionStore.setHead", nodeId, true);
    this.call("setHead", sessionId, nodeId, Date.now());
  }

  listBranches(sessionId: string): SessionBranch[] {
    checkSessionId("SessionStore.listBranches", sessionId);
    const head = this.head(sessionId);
    return branchesOf(new SessionGraph(this.readNodes(sessionId)), head);
  }

  exportGraph(sessionId: string, options: ExportGraphOptions = {}): string {
    checkSessionId("SessionStore.exportGraph", sessionId);
    exportGraphOptionsSchema.parse(options);
    return renderSessionGraph(this.getSession(sessionId), this.readNodes(sessionId), options.format ?? "json");
  }

  readNodes(sessionId: string): SessionNode[] {
    checkSessionId("SessionStore.readNodes", sessionId);
    const nodes: SessionNode[] = [];
    // In pages: one JSON text per page stays far below V8's string limit at any session size.
    for (let afterSeq = -1, afterRowid = -1; ; ) {
      const [json, lastSeq, lastRowid, count] = this.call("readNodesPage", sessionId, afterSeq, afterRowid, READ_PAGE) as [string, number, number, number];
      for (const row of JSON.parse(json) as Row[]) nodes.push(nodeFromRow(row));
      if (count < READ_PAGE) return nodes;
      afterSeq = lastSeq;
      afterRowid = lastRowid;
    }
  }

  readAncestry(sessionId: string, nodeId: string, options: ReadAncestryOptions = {}): SessionNode[] {
    checkSessionId("SessionStore.readAncestry", sessionId);
    checkNodeId("SessionStore.readAncestry", nodeId);
    readAncestryOptionsSchema.parse(options);
    const turns = options.turns ?? Infinity;
    const [json] = this.call("readAncestry", sessionId, nodeId, turns === Infinity ? Number.MAX_SAFE_INTEGER : turns) as [string, number];
    return (JSON.parse(json) as Row[]).map(nodeFromRow);
  }

  hasNode(sessionId: string, nodeId: string): boolean {
    checkSessionId("SessionStore.hasNode", sessionId);
    checkNodeId("SessionStore.hasNode", nodeId);
    return this.call("hasNode", sessionId, nodeId) as boolean;
  }

  /**
   * Applies the operations in one `BEGIN IMMEDIATE` transaction and returns
   * the `seq` each new node was stored with (allocated inside the
   * transaction). Waits at most one short attempt for the write lock, then
   * throws {@link SessionStoreBusyError}; use {@link commitWithRetry} to wait
   * longer without blocking. The fences (`options.fences`) are checked in
   * the same transaction: a run at another lease epoch refuses the whole
   * commit with a {@link LeaseLostError}.
   */
  commit(sessionId: string, operations: readonly SessionWriteOperation[], options?: SessionCommitOptions): SessionCommitResult {
    checkSessionId("SessionStore.commit", sessionId);
    const fences = commitFences("SessionStore.commit", options);
    if (operations.length === 0) return { seqs: new Map() };
    return this.committed(sessionId, this.call("commit", sessionId, operations.map(encodeOperation), encodeFences(fences)) as CommitReply);
  }

  /**
   * {@link commit} that waits for a locked database without blocking the
   * event loop: each attempt runs in the store's worker thread, and between
   * attempts it backs off (2, 4, 8 … 50 ms) until {@link busyTimeoutMs} has
   * passed, then rejects with {@link SessionStoreBusyError}. Any other fault
   * rejects at once. The operations are encoded when called: changing them
   * afterwards changes nothing. Commits of one session must not overlap:
   * wait for this one before committing that session's next batch.
   *
   * @example
   * ```ts
   * const { seqs } = await store.commitWithRetry("s1", operations);
   * ```
   */
  async commitWithRetry(sessionId: string, operations: readonly SessionWriteOperation[], options?: SessionCommitOptions): Promise<SessionCommitResult> {
    checkSessionId("SessionStore.commitWithRetry", sessionId);
    const fences = encodeFences(commitFences("SessionStore.commitWithRetry", options));
    this.assertOpen();
    if (operations.length === 0) return { seqs: new Map() };
    const encoded = operations.map(encodeOperation);
    return retryThroughLocks(this.busyTimeoutMs, this.location, async () => {
      this.assertOpen();
      try {
        return this.committed(sessionId, (await this.connection.callAsync("commit", sessionId, encoded, fences)) as CommitReply);
      } catch (error) {
        throw this.fault(error);
      }
    });
  }

  flush(): void {
    this.assertOpen();
    flushPendingWriters(this);
  }

  /** See {@link ConsumeOnceStore.consumeOnce}: one write transaction (waits through another connection's lock like any write). */
  consumeOnce(sessionId: string, key: string): boolean {
    checkSessionId("SessionStore.consumeOnce", sessionId);
    if (typeof key !== "string" || key === "") throw new TypeError("SessionStore.consumeOnce(sessionId, key): key must be a non-empty string");
    return this.callThroughLocks(() => this.call("consumeOnce", sessionId, key, Date.now())) as boolean;
  }

  registerRun(runId: string, sessionId: string, name: string, leaseMs: number): void {
    checkRunArguments("SessionStore.registerRun", runId, leaseMs);
    checkSessionId("SessionStore.registerRun", sessionId);
    this.callThroughLocks(() => this.call("registerRun", runId, sessionId, name, leaseMs, Date.now()));
  }

  /** See {@link RunLeaseStore.claimRun}: a holder that is a dead process of this host frees the lease at once. */
  claimRun(runId: string, states: readonly RunState[], leaseMs: number, fromEpoch?: number): boolean {
    checkRunArguments("SessionStore.claimRun", runId, leaseMs, states, fromEpoch);
    return this.callThroughLocks(() => this.call("claimRun", runId, states, leaseMs, Date.now(), [...openStores], fromEpoch ?? null)) as boolean;
  }

  renewRun(runId: string, leaseMs: number, epoch?: number): boolean {
    checkRunArguments("SessionStore.renewRun", runId, leaseMs, undefined, epoch);
    return this.call("renewRun", runId, leaseMs, Date.now(), epoch ?? null) as boolean;
  }

  releaseRun(runId: string, state: RunState, reason: string | null, epoch?: number): void {
    checkRunArguments("SessionStore.releaseRun", runId, undefined, [state], epoch);
    this.callThroughLocks(() => this.call("releaseRun", runId, state, reason, Date.now(), epoch ?? null));
  }

  /**
   * A lease write, tried again while another connection holds the lock, up
   * to `busyTimeoutMs`: a run's start, claim and end are small and rare, and
   * one given up (a finished run left `running`) would be replayed later.
   */
  private callThroughLocks<R>(write: () => R): R {
    return writeThroughLocks(this.busyTimeoutMs, write);
  }

  getRun(runId: string): RunRecord | undefined {
    checkRunArguments("SessionStore.getRun", runId);
    const found = this.call("getRun", runId) as RunRow | undefined;
    return found === undefined ? undefined : runFromRow(found);
  }

  listRuns(states?: readonly RunState[]): RunRecord[] {
    checkRunArguments("SessionStore.listRuns", "all", undefined, states);
    return (this.call("listRuns", states ?? null) as RunRow[]).map(runFromRow);
  }

  interruptRunning(): number {
    return this.call("interruptRunning") as number;
  }

  /**
   * Commits pending writers, marks this store's running nodes interrupted,
   * checkpoints the WAL and closes the database: every file handle is
   * released when it returns (the last connection to close also removes the
   * `-wal` and `-shm` files). Idempotent.
   *
   * While another connection holds the write lock, it keeps trying (one
   * short attempt at a time, up to `busyTimeoutMs`) rather than drop a
   * pending batch: closing is the last thing a store does, so here it waits.
   * A fault that remains is thrown after the store is closed.
   */
  close(): void {
    if (this.closed) return;
    try {
      const deadline = Date.now() + this.busyTimeoutMs;
      for (;;) {
        try {
          flushPendingWriters(this);
          this.interruptRunning();
          break;
        } catch (error) {
          if (!(error instanceof SessionStoreBusyError) || Date.now() >= deadline) throw error;
        }
      }
    } finally {
      this.closed = true;
      openStores.delete(this.ownerStore);
      this.heads.close();
      releaseSharedWriters(this);
      this.uninstallShutdown?.();
      try {
        this.connection.close();
      } catch {
        /* the worker is gone: so are its handles */
      }
    }
  }

  /** The result of a commit; the head it left is remembered with its stamp. */
  private committed(sessionId: string, [seqs, head, stamp]: CommitReply): SessionCommitResult {
    this.rememberHead(sessionId, head, stamp);
    return { seqs: new Map(seqs) };
  }

  private rememberHead(sessionId: string, head: string | null, stamp: string | null): void {
    this.heads.remember(sessionId, head, stamp);
  }

  private call(op: string, ...args: unknown[]): unknown {
    this.assertOpen();
    try {
      return this.connection.call(op, ...args);
    } catch (error) {
      throw this.fault(error);
    }
  }

  private fault(error: unknown): Error {
    return storeFault(error, this.location, this.attemptMs);
  }

  private assertOpen(): void {
    if (this.closed) throw new SessionStoreClosedError(this.location);
  }
}
