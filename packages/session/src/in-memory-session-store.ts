import type { SessionNode } from "./session-node";
import type {
  ExportGraphOptions,
  SessionBranch,
  SessionCommitResult,
  SessionCommitOptions,
  SessionCreateOptions,
  SessionInfo,
  SessionStoreLike,
  SessionWriteOperation,
} from "./session-store-like";
import { SessionGraph } from "./session-graph";
import { ancestryIn, type ReadAncestryOptions } from "./ancestry";
import { branchesOf } from "./session-branches";
import { renderSessionGraph } from "./export-graph";
import {
  LeaseLostError,
  SessionExistsError,
  SessionNodeConflictError,
  SessionNodeNotFoundError,
  SessionNotFoundError,
  SessionStoreClosedError,
  SessionStoreError,
} from "./session-errors";
import { flushPendingWriters, releaseSharedWriter, releaseSharedWriters } from "./writer-registry";
import { applyUpdate, withSeq } from "./node-update";
import { ProposedSeqs } from "./proposed-seqs";
import type { ConsumeOnceStore } from "./consume-once";
import { checkCreateSessionArguments, checkNodeId, checkSessionId, exportGraphOptionsSchema, readAncestryOptionsSchema } from "./session-arguments";
import { checkRunArguments, commitFences, type LeaseFence, type RunLeaseStore, type RunRecord, type RunState } from "./run-leases";

interface MemoryRun {
  runId: string;
  sessionId: string;
  name: string;
  state: RunState;
  reason: string | null;
  leaseUntil: number | null;
  updatedAt: number;
  createdAt: number;
  leaseEpoch: number;
}

/** The result of a commit that appended nothing new. */
const NOTHING_APPENDED: SessionCommitResult = Object.freeze({ seqs: new Map<string, number>() });

/** The seqs of the nodes appended before `end`, all stored as proposed. */
function proposedBefore(operations: readonly SessionWriteOperation[], end: number): Map<string, number> {
  const seqs = new Map<string, number>();
  for (let index = 0; index < end; index++) {
    const operation = operations[index]!;
    if (operation.kind === "append") seqs.set(operation.node.id, operation.node.seq);
  }
  return seqs;
}

/** Whether two nodes under one id are the same node (sent again): what a writer sets once and never updates. */
function sameNode(stored: SessionNode, node: SessionNode): boolean {
  return (
    stored.createdAt === node.createdAt &&
    stored.role === node.role &&
    stored.name === node.name &&
    stored.caller === node.caller &&
    stored.predecessor === node.predecessor
  );
}

/** A session's state, changed in place by every commit; {@link InMemorySessionStore.getSession} copies it out. */
interface MemorySession {
  readonly id: string;
  readonly agentId: string | null;
  readonly title: string | null;
  readonly createdAt: number;
  updatedAt: number;
  headId: string | null;
  lastSeq: number;
  readonly graph: SessionGraph;
}

/**
 * A session store that keeps everything in process memory, with the same
 * contract as {@link SessionStore} (idempotent appends, merged metadata,
 * head and branches, export). For tests and for runs that need a session
 * graph but no file. Nothing survives the process.
 *
 * @example
 * ```ts
 * const store = new InMemorySessionStore();
 * store.createSession("s1", { agentId: "Researcher" });
 * const writer = new SessionNodeWriter(store, "s1");
 * ```
 */
export class InMemorySessionStore implements SessionStoreLike, RunLeaseStore, ConsumeOnceStore {
  /** @default "in-memory store" */
  readonly location = "in-memory store";
  private readonly sessions = new Map<string, MemorySession>();
  private readonly runs = new Map<string, MemoryRun>();
  private closed = false;

  createSession(id: string, options: SessionCreateOptions = {}): SessionInfo {
    checkCreateSessionArguments("InMemorySessionStore.createSession", id, options);
    this.assertOpen();
    if (this.sessions.has(id)) throw new SessionExistsError(id, this.location);
    const now = Date.now();
    this.sessions.set(id, {
      id,
      agentId: options.agentId ?? null,
      title: options.title ?? null,
      createdAt: now,
      updatedAt: now,
      headId: null,
      lastSeq: -1,
      graph: new SessionGraph(),
    });
    return this.getSession(id);
  }

  getSession(id: string): SessionInfo {
    const session = this.session(id);
    return {
      id: session.id,
      agentId: session.agentId,
      title: session.title,
      createdAt: session.createdAt,
      updatedAt: session.updatedAt,
      headId: session.headId,
      nodeCount: session.graph.size,
      lastSeq: session.lastSeq,
    };
  }

  hasSession(id: string): boolean {
    checkSessionId("InMemorySessionStore.hasSession", id);
    this.assertOpen();
    return this.sessions.has(id);
  }

  listSessions(): SessionInfo[] {
    this.assertOpen();
    return [...this.sessions.keys()]
      .map((id) => this.getSession(id))
      .sort((a, b) => b.updatedAt - a.updatedAt || a.id.localeCompare(b.id));
  }

  deleteSession(id: string): void {
    this.session(id);
    this.sessions.delete(id);
    for (const run of [...this.runs.values()]) if (run.sessionId === id) this.runs.delete(run.runId);
    for (const [key, sessionId] of [...this.consumed]) if (sessionId === id) this.consumed.delete(key);
    releaseSharedWriter(this, id);
  }

  registerRun(runId: string, sessionId: string, name: string, leaseMs: number): void {
    checkRunArguments("InMemorySessionStore.registerRun", runId, leaseMs);
    this.session(sessionId);
    // As the databases' primary key refuses it: a second registration would reset the lease epoch of a live run.
    if (this.runs.has(runId)) throw new SessionStoreError(`run ${runId} is registered already`, this.location);
    const now = Date.now();
    this.runs.set(runId, { runId, sessionId, name, state: "running", reason: null, leaseUntil: now + leaseMs, updatedAt: now, createdAt: now, leaseEpoch: 1 });
  }

  /** One process holds this store, so a lease is free when nobody holds it or it expired. */
  claimRun(runId: string, states: readonly RunState[], leaseMs: number, fromEpoch?: number): boolean {
    checkRunArguments("InMemorySessionStore.claimRun", runId, leaseMs, states, fromEpoch);
    this.assertOpen();
    const run = this.runs.get(runId);
    const now = Date.now();
    if (run === undefined || !states.includes(run.state)) return false;
    if (run.leaseUntil !== null && run.leaseUntil >= now) return false;
    if (fromEpoch !== undefined && run.leaseEpoch !== fromEpoch) return false;
    Object.assign(run, { state: "running", reason: null, leaseUntil: now + leaseMs, updatedAt: now, leaseEpoch: run.leaseEpoch + 1 });
    return true;
  }

  /** One process holds this store, so without `epoch` any caller renews; with it, only the holder of that epoch. */
  renewRun(runId: string, leaseMs: number, epoch?: number): boolean {
    checkRunArguments("InMemorySessionStore.renewRun", runId, leaseMs, undefined, epoch);
    this.assertOpen();
    const run = this.runs.get(runId);
    if (run === undefined || run.leaseUntil === null || run.state !== "running") return false;
    if (epoch !== undefined && run.leaseEpoch !== epoch) return false;
    const now = Date.now();
    run.leaseUntil = now + leaseMs;
    run.updatedAt = now;
    return true;
  }

  releaseRun(runId: string, state: RunState, reason: string | null, epoch?: number): void {
    checkRunArguments("InMemorySessionStore.releaseRun", runId, undefined, [state], epoch);
    this.assertOpen();
    const run = this.runs.get(runId);
    if (epoch !== undefined) this.checkFence({ runId, epoch });
    if (run === undefined || run.leaseUntil === null) return;
    Object.assign(run, { state, reason, leaseUntil: null, updatedAt: Date.now() });
  }

  /** See {@link ConsumeOnceStore.consumeOnce}. */
  consumeOnce(sessionId: string, key: string): boolean {
    checkSessionId("InMemorySessionStore.consumeOnce", sessionId);
    this.session(sessionId);
    if (typeof key !== "string" || key === "") throw new TypeError("InMemorySessionStore.consumeOnce(sessionId, key): key must be a non-empty string");
    if (this.consumed.has(key)) return false;
    this.consumed.set(key, sessionId);
    return true;
  }

  /** Consumed keys ({@link consumeOnce}) and the session each belongs to. */
  private readonly consumed = new Map<string, string>();

  getRun(runId: string): RunRecord | undefined {
    checkRunArguments("InMemorySessionStore.getRun", runId);
    this.assertOpen();
    const run = this.runs.get(runId);
    return run === undefined ? undefined : { ...run, owned: run.leaseUntil !== null };
  }

  listRuns(states?: readonly RunState[]): RunRecord[] {
    checkRunArguments("InMemorySessionStore.listRuns", "all", undefined, states);
    this.assertOpen();
    return [...this.runs.values()]
      .filter((run) => states === undefined || states.includes(run.state))
      .map((run) => ({ ...run, owned: run.leaseUntil !== null }));
  }

  head(sessionId: string): string | null {
    return this.session(sessionId).headId;
  }

  setHead(sessionId: string, nodeId: string | null): void {
    checkNodeId("InMemorySessionStore.setHead", nodeId, true);
    const session = this.session(sessionId);
    if (nodeId !== null && !session.graph.has(nodeId)) {
      throw new SessionNodeNotFoundError(sessionId, nodeId, this.location);
    }
    session.headId = nodeId;
    session.updatedAt = Date.now();
  }

  listBranches(sessionId: string): SessionBranch[] {
    const session = this.session(sessionId);
    return branchesOf(session.graph, session.headId);
  }

  exportGraph(sessionId: string, options: ExportGraphOptions = {}): string {
    exportGraphOptionsSchema.parse(options);
    return renderSessionGraph(this.getSession(sessionId), this.readNodes(sessionId), options.format ?? "json");
  }

  // Reads hand out copies, as a store on a file does: changing what was read (a resumed step's saved result) changes
  // nothing stored.
  readNodes(sessionId: string): SessionNode[] {
    return this.session(sessionId).graph.all().map(copyOf);
  }

  readAncestry(sessionId: string, nodeId: string, options: ReadAncestryOptions = {}): SessionNode[] {
    checkNodeId("InMemorySessionStore.readAncestry", nodeId);
    readAncestryOptionsSchema.parse(options);
    return ancestryIn(this.session(sessionId).graph, nodeId, options).map(copyOf);
  }

  hasNode(sessionId: string, nodeId: string): boolean {
    checkNodeId("InMemorySessionStore.hasNode", nodeId);
    return this.session(sessionId).graph.has(nodeId);
  }

  /**
   * Applies the operations in order, all or nothing. An appended node is
   * stored with the `seq` it proposes when that is above every `seq` in the
   * session, else with the next one, so `seq` never repeats whoever wrote
   * before. The same node appended again is ignored; another node under a
   * taken id is a {@link SessionNodeConflictError}, and nothing is applied.
   * A fence whose run is at another lease epoch is a {@link LeaseLostError},
   * and nothing is applied.
   */
  commit(sessionId: string, operations: readonly SessionWriteOperation[], options?: SessionCommitOptions): SessionCommitResult {
    const session = this.session(sessionId);
    for (const fence of commitFences("InMemorySessionStore.commit", options)) this.checkFence(fence);
    // Checked before anything changes, so a conflict leaves the session as it was.
    let stored = 0;
    // A node new to the session may come twice in one commit: the first is stored, the second is a repeat like any other.
    const fresh = operations.length > 1 ? new Map<string, SessionNode>() : undefined;
    for (let index = 0; index < operations.length; index++) {
      const operation = operations[index]!;
      if (operation.kind !== "append") continue;
      const existing = session.graph.get(operation.node.id) ?? fresh?.get(operation.node.id);
      if (existing === undefined) {
        fresh?.set(operation.node.id, operation.node);
        continue;
      }
      if (!sameNode(existing, operation.node)) throw new SessionNodeConflictError(sessionId, existing.id, this.location);
      stored++;
    }
    // A Map of the seqs is made only when a node is skipped or gets another seq than proposed.
    let seqs: Map<string, number> | undefined;
    let appended = 0;
    for (let index = 0; index < operations.length; index++) {
      const operation = operations[index]!;
      if (operation.kind === "append") {
        let node = operation.node;
        if (stored !== 0 && session.graph.has(node.id)) {
          seqs ??= proposedBefore(operations, index);
          continue;
        }
        // A proposal that is not a later integer is no proposal: the next seq.
        if (!Number.isSafeInteger(node.seq) || node.seq <= session.lastSeq) {
          seqs ??= proposedBefore(operations, index);
          node = withSeq(node, session.lastSeq + 1);
        }
        session.graph.add(node);
        session.lastSeq = node.seq;
        seqs?.set(node.id, node.seq);
        appended++;
        if (node.caller === null) session.headId = node.id;
        continue;
      }
      const node = session.graph.get(operation.id);
      if (node !== undefined) session.graph.replace(applyUpdate(node, operation.fields));
    }
    session.updatedAt = Date.now();
    if (appended === 0) return NOTHING_APPENDED;
    return seqs === undefined ? new ProposedSeqs(operations) : { seqs };
  }

  flush(): void {
    this.assertOpen();
    flushPendingWriters(this);
  }

  interruptRunning(): number {
    let changed = 0;
    for (const session of this.sessions.values()) {
      for (const node of session.graph.all()) {
        if (node.metadata["status"] !== "running") continue;
        session.graph.replace({ ...node, metadata: { ...node.metadata, status: "interrupted" } });
        changed++;
      }
    }
    return changed;
  }

  close(): void {
    if (this.closed) return;
    flushPendingWriters(this);
    this.closed = true;
    releaseSharedWriters(this);
  }

  private session(id: string): MemorySession {
    checkSessionId("InMemorySessionStore", id);
    this.assertOpen();
    const session = this.sessions.get(id);
    if (session === undefined) throw new SessionNotFoundError(id, this.location);
    return session;
  }

  /** Throws a {@link LeaseLostError} unless the run's lease is still at the fence's epoch. */
  private checkFence(fence: LeaseFence): void {
    const current = this.runs.get(fence.runId)?.leaseEpoch ?? null;
    if (current !== fence.epoch) throw new LeaseLostError(fence.runId, fence.epoch, current, this.location);
  }

  private assertOpen(): void {
    if (this.closed) throw new SessionStoreClosedError(this.location);
  }
}

/** A node whose values are its own: JSON data, so a structured clone is the copy a JSON round trip would give. */
function copyOf(node: SessionNode): SessionNode {
  const copy = { ...node, metadata: structuredClone(node.metadata) as Record<string, unknown> };
  if (typeof node.input === "object" && node.input !== null) copy.input = structuredClone(node.input);
  if (typeof node.output === "object" && node.output !== null) copy.output = structuredClone(node.output);
  return copy;
}
