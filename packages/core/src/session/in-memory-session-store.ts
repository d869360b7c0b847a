import type { SessionNode } from "./session-node";
import type {
  ExportGraphOptions,
  SessionBranch,
  SessionCreateOptions,
  SessionInfo,
  SessionStoreLike,
  SessionWriteOperation,
} from "./session-store-like";
import { SessionGraph } from "./session-graph";
import { branchesOf } from "./session-branches";
import { renderSessionGraph } from "./export-graph";
import {
  SessionExistsError,
  SessionNodeNotFoundError,
  SessionNotFoundError,
  SessionStoreClosedError,
} from "./session-errors";
import { flushPendingWriters } from "./writer-registry";
import { applyUpdate } from "./node-update";
import { checkCreateSessionArguments, checkNodeId, checkSessionId, exportGraphOptionsSchema } from "../options/session-arguments";

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
export class InMemorySessionStore implements SessionStoreLike {
  /** @default "in-memory store" */
  readonly location = "in-memory store";
  private readonly sessions = new Map<string, MemorySession>();
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

  readNodes(sessionId: string): SessionNode[] {
    return [...this.session(sessionId).graph.all()];
  }

  hasNode(sessionId: string, nodeId: string): boolean {
    checkNodeId("InMemorySessionStore.hasNode", nodeId);
    return this.session(sessionId).graph.has(nodeId);
  }

  commit(sessionId: string, operations: readonly SessionWriteOperation[]): void {
    const session = this.session(sessionId);
    for (const operation of operations) {
      if (operation.kind === "append") {
        const node = operation.node;
        if (!session.graph.add(node)) continue;
        if (node.seq > session.lastSeq) session.lastSeq = node.seq;
        if (node.caller === null) session.headId = node.id;
        continue;
      }
      const node = session.graph.get(operation.id);
      if (node !== undefined) session.graph.replace(applyUpdate(node, operation.fields));
    }
    session.updatedAt = Date.now();
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
  }

  private session(id: string): MemorySession {
    checkSessionId("InMemorySessionStore", id);
    this.assertOpen();
    const session = this.sessions.get(id);
    if (session === undefined) throw new SessionNotFoundError(id, this.location);
    return session;
  }

  private assertOpen(): void {
    if (this.closed) throw new SessionStoreClosedError(this.location);
  }
}
