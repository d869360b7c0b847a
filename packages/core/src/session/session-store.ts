import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join, resolve } from "node:path";
import { randomUUID } from "node:crypto";
import Database from "libsql";
import type { SessionNode, SessionNodeRole } from "./session-node";
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
  ForeignDatabaseError,
  SessionExistsError,
  SessionNodeNotFoundError,
  SessionNotFoundError,
  SessionSchemaVersionError,
  SessionStoreClosedError,
  SessionStoreCorruptError,
  SessionStoreError,
} from "./session-errors";
import { REIN_APPLICATION_ID, SESSION_MIGRATIONS, SESSION_SCHEMA_VERSION } from "./session-schema";
import { flushPendingWriters } from "./writer-registry";
import { nodeJsonOf } from "./node-json";
import { installShutdownFlush } from "./shutdown-flush";
import {
  checkCreateSessionArguments,
  checkNodeId,
  checkSessionId,
  exportGraphOptionsSchema,
  sessionStoreOptionsSchema,
} from "../options/session-arguments";

/**
 * Options of {@link SessionStore}.
 * @example
 * ```ts
 * new SessionStore({ path: ":memory:" });
 * new SessionStore({ path: "runs/sessions.db", shutdownFlush: false });
 * ```
 */
export interface SessionStoreOptions {
  /**
   * The database file (its directory is created), or `":memory:"`.
   * @default ".rein/sessions.db" under process.cwd()
   */
  path?: string;
  /**
   * Commit pending writes and mark running nodes interrupted on SIGINT,
   * SIGTERM and `process.exit` (see {@link installShutdownFlush}).
   * @default true for a file, false for ":memory:"
   */
  shutdownFlush?: boolean;
  /**
   * Milliseconds to wait for another connection's write lock.
   * @default 5000
   */
  busyTimeoutMs?: number;
}

type Row = unknown[];
type Statement = Database.Statement;

const CORRUPT_CODES = new Set(["SQLITE_NOTADB", "SQLITE_CORRUPT"]);

function isCorruption(error: unknown): boolean {
  return typeof error === "object" && error !== null && CORRUPT_CODES.has(String((error as { code?: unknown }).code));
}

function encode(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value);
}

function decode(text: unknown): unknown {
  return text === null || text === undefined ? undefined : JSON.parse(String(text));
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

const NODE_COLUMNS = "id, seq, created_at, role, name, input, output, caller, predecessor, metadata";

function nodeFromRow(row: Row): SessionNode {
  return {
    id: String(row[0]),
    seq: Number(row[1]),
    createdAt: Number(row[2]),
    role: row[3] as SessionNodeRole,
    name: String(row[4]),
    input: decode(row[5]),
    output: decode(row[6]),
    caller: row[7] === null ? null : String(row[7]),
    predecessor: row[8] === null ? null : String(row[8]),
    metadata: decode(row[9]) as Record<string, unknown>,
  };
}

const SESSION_COLUMNS =
  "s.id, s.agent_id, s.title, s.created_at, s.updated_at, s.head_id, s.last_seq, " +
  "(SELECT count(*) FROM rein_nodes n WHERE n.session_id = s.id)";

function sessionFromRow(row: Row): SessionInfo {
  return {
    id: String(row[0]),
    agentId: row[1] === null ? null : String(row[1]),
    title: row[2] === null ? null : String(row[2]),
    createdAt: Number(row[3]),
    updatedAt: Number(row[4]),
    headId: row[5] === null ? null : String(row[5]),
    lastSeq: Number(row[6]),
    nodeCount: Number(row[7]),
  };
}

/**
 * The persistent session store: an embedded SQLite database (through
 * `libsql`) in WAL mode, so other connections and processes read committed
 * nodes while one writes. The schema is versioned in `rein_migrations`.
 *
 * On open it refuses, untouched, a file that is not SQLite
 * ({@link SessionStoreCorruptError}), a database Rein did not create
 * ({@link ForeignDatabaseError}) or one from a newer Rein
 * ({@link SessionSchemaVersionError}); then it marks `interrupted` the nodes
 * left `running` by a process that no longer exists (a crash). Nodes still
 * `running` in a live process on this host, or on another host, are left
 * alone.
 *
 * The caller owns the store and closes it; `close()` commits pending writes
 * and marks this store's own running nodes interrupted.
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
export class SessionStore implements SessionStoreLike {
  /** Absolute path of the database file, or `":memory:"`. */
  readonly location: string;
  private readonly db: Database.Database;
  private readonly ownerHost = hostname();
  private readonly ownerStore = randomUUID();
  private readonly statements = new Map<string, Statement>();
  private readonly commitTransaction: (sessionId: string, operations: readonly SessionWriteOperation[]) => void;
  private readonly uninstallShutdown: (() => void) | undefined;
  private closed = false;

  constructor(options: SessionStoreOptions = {}) {
    sessionStoreOptionsSchema.parse(options);
    const path = options.path ?? join(process.cwd(), ".rein", "sessions.db");
    const inMemory = path === ":memory:";
    this.location = inMemory ? path : resolve(path);
    if (!inMemory) mkdirSync(dirname(this.location), { recursive: true });
    try {
      this.db = new Database(this.location);
    } catch (cause) {
      if (isCorruption(cause)) throw new SessionStoreCorruptError(this.location, cause);
      throw new SessionStoreError(
        `Cannot open session store '${this.location}': ${(cause as Error).message}. Check that the path is writable, or pass another { path }.`,
        this.location,
        { cause },
      );
    }
    try {
      this.open(options.busyTimeoutMs ?? 5000);
    } catch (error) {
      this.db.close();
      if (isCorruption(error)) throw new SessionStoreCorruptError(this.location, error);
      throw error;
    }
    this.commitTransaction = this.db.transaction((sessionId: string, operations: readonly SessionWriteOperation[]) =>
      this.applyOperations(sessionId, operations),
    ).immediate;
    this.uninstallShutdown = (options.shutdownFlush ?? !inMemory) ? installShutdownFlush(this) : undefined;
  }

  createSession(id: string, options: SessionCreateOptions = {}): SessionInfo {
    checkCreateSessionArguments("SessionStore.createSession", id, options);
    return this.guard(() => {
      const now = Date.now();
      const result = this.statement(
        "INSERT OR IGNORE INTO rein_sessions (id, agent_id, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
      ).run(id, options.agentId ?? null, options.title ?? null, now, now);
      if (result.changes === 0) throw new SessionExistsError(id, this.location);
      return this.getSession(id);
    });
  }

  getSession(id: string): SessionInfo {
    checkSessionId("SessionStore.getSession", id);
    return this.guard(() => {
      const row = this.statement(`SELECT ${SESSION_COLUMNS} FROM rein_sessions s WHERE s.id = ?`).raw().get(id);
      if (row === undefined) throw new SessionNotFoundError(id, this.location);
      return sessionFromRow(row as Row);
    });
  }

  hasSession(id: string): boolean {
    checkSessionId("SessionStore.hasSession", id);
    return this.guard(() => this.statement("SELECT 1 FROM rein_sessions WHERE id = ?").raw().get(id) !== undefined);
  }

  listSessions(): SessionInfo[] {
    return this.guard(() =>
      (this.statement(`SELECT ${SESSION_COLUMNS} FROM rein_sessions s ORDER BY s.updated_at DESC, s.id`).raw().all() as Row[]).map(
        sessionFromRow,
      ),
    );
  }

  deleteSession(id: string): void {
    checkSessionId("SessionStore.deleteSession", id);
    this.guard(() => {
      this.db.transaction(() => {
        const result = this.statement("DELETE FROM rein_sessions WHERE id = ?").run(id);
        if (result.changes === 0) throw new SessionNotFoundError(id, this.location);
        this.statement("DELETE FROM rein_nodes WHERE session_id = ?").run(id);
      }).immediate();
    });
  }

  head(sessionId: string): string | null {
    checkSessionId("SessionStore.head", sessionId);
    return this.guard(() => {
      const row = this.statement("SELECT head_id FROM rein_sessions WHERE id = ?").raw().get(sessionId) as Row | undefined;
      if (row === undefined) throw new SessionNotFoundError(sessionId, this.location);
      return row[0] === null ? null : String(row[0]);
    });
  }

  setHead(sessionId: string, nodeId: string | null): void {
    checkSessionId("SessionStore.setHead", sessionId);
    checkNodeId("SessionStore.setHead", nodeId, true);
    this.guard(() => {
      if (!this.hasSession(sessionId)) throw new SessionNotFoundError(sessionId, this.location);
      if (nodeId !== null && !this.hasNode(sessionId, nodeId)) {
        throw new SessionNodeNotFoundError(sessionId, nodeId, this.location);
      }
      this.statement("UPDATE rein_sessions SET head_id = ?, updated_at = ? WHERE id = ?").run(nodeId, Date.now(), sessionId);
    });
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
    return this.guard(() => {
      if (!this.hasSession(sessionId)) throw new SessionNotFoundError(sessionId, this.location);
      const rows = this.statement(
        `SELECT ${NODE_COLUMNS} FROM rein_nodes WHERE session_id = ? ORDER BY seq, rowid`,
      ).raw().all(sessionId) as Row[];
      return rows.map(nodeFromRow);
    });
  }

  hasNode(sessionId: string, nodeId: string): boolean {
    checkSessionId("SessionStore.hasNode", sessionId);
    checkNodeId("SessionStore.hasNode", nodeId);
    return this.guard(
      () => this.statement("SELECT 1 FROM rein_nodes WHERE session_id = ? AND id = ?").raw().get(sessionId, nodeId) !== undefined,
    );
  }

  commit(sessionId: string, operations: readonly SessionWriteOperation[]): void {
    checkSessionId("SessionStore.commit", sessionId);
    if (operations.length === 0) return;
    this.guard(() => this.commitTransaction(sessionId, operations));
  }

  flush(): void {
    this.assertOpen();
    flushPendingWriters(this);
  }

  interruptRunning(): number {
    return this.guard(
      () =>
        this.statement(
          "UPDATE rein_nodes SET status = 'interrupted', metadata = json_set(metadata, '$.status', 'interrupted') " +
            "WHERE status = 'running' AND owner_store = ?",
        ).run(this.ownerStore).changes,
    );
  }

  /** Commits pending writers, marks this store's running nodes interrupted and closes the database. Idempotent. */
  close(): void {
    if (this.closed) return;
    try {
      flushPendingWriters(this);
      this.interruptRunning();
    } finally {
      this.closed = true;
      this.uninstallShutdown?.();
      this.statements.clear();
      this.db.close();
    }
  }

  private open(busyTimeoutMs: number): void {
    const db = this.db;
    db.prepare(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`).raw().get();
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").raw().all() as Row[]).map(
      (row) => String(row[0]),
    );
    const applicationId = Number((db.prepare("PRAGMA application_id").raw().get() as Row)[0]);
    if (!tables.includes("rein_migrations")) {
      if (tables.length > 0 || (applicationId !== 0 && applicationId !== REIN_APPLICATION_ID)) {
        throw new ForeignDatabaseError(this.location, tables.slice(0, 10));
      }
    } else {
      this.assertKnownVersion();
    }
    if (!this.location.startsWith(":")) db.prepare("PRAGMA journal_mode = WAL").raw().get();
    // In WAL mode NORMAL keeps every commit across a process crash; only a
    // power loss can drop the last transactions.
    db.exec("PRAGMA synchronous = NORMAL");
    this.migrate();
    this.recoverInterrupted();
  }

  private currentVersion(): number {
    const row = this.db.prepare("SELECT max(version) FROM rein_migrations").raw().get() as Row;
    return row[0] === null ? 0 : Number(row[0]);
  }

  private assertKnownVersion(): void {
    const version = this.currentVersion();
    if (version > SESSION_SCHEMA_VERSION) {
      throw new SessionSchemaVersionError(this.location, version, SESSION_SCHEMA_VERSION);
    }
  }

  private migrate(): void {
    const db = this.db;
    db.transaction(() => {
      db.exec(
        "CREATE TABLE IF NOT EXISTS rein_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
      );
      // Re-read inside the write lock: another process may have migrated meanwhile.
      this.assertKnownVersion();
      const current = this.currentVersion();
      for (const migration of SESSION_MIGRATIONS) {
        if (migration.version <= current) continue;
        db.exec(migration.sql);
        db.prepare("INSERT INTO rein_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
          migration.version,
          migration.name,
          Date.now(),
        );
      }
      db.exec(`PRAGMA application_id = ${REIN_APPLICATION_ID}`);
    }).immediate();
  }

  /** Marks interrupted the running nodes of processes on this host that are gone (or of unknown owner). */
  private recoverInterrupted(): void {
    const owners = this.db
      .prepare("SELECT DISTINCT owner_host, owner_pid FROM rein_nodes WHERE status = 'running'")
      .raw()
      .all() as Row[];
    const mark = this.db.prepare(
      "UPDATE rein_nodes SET status = 'interrupted', metadata = json_set(metadata, '$.status', 'interrupted') " +
        "WHERE status = 'running' AND owner_host IS ? AND owner_pid IS ?",
    );
    for (const [host, pid] of owners) {
      const orphaned =
        host === null || pid === null || (host === this.ownerHost && Number(pid) !== process.pid && !isProcessAlive(Number(pid)));
      if (orphaned) mark.run(host, pid);
    }
  }

  private applyOperations(sessionId: string, operations: readonly SessionWriteOperation[]): void {
    const session = this.statement("SELECT head_id, last_seq FROM rein_sessions WHERE id = ?").raw().get(sessionId) as
      | Row
      | undefined;
    if (session === undefined) throw new SessionNotFoundError(sessionId, this.location);
    let headId = session[0] as string | null;
    let lastSeq = Number(session[1]);
    const insert = this.statement(
      "INSERT OR IGNORE INTO rein_nodes (session_id, id, seq, created_at, role, name, input, output, caller, predecessor, " +
        "metadata, status, owner_host, owner_pid, owner_store) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    const select = this.statement("SELECT name, input, output, metadata FROM rein_nodes WHERE session_id = ? AND id = ?");
    const update = this.statement(
      "UPDATE rein_nodes SET name = ?, input = ?, output = ?, metadata = ?, status = ? WHERE session_id = ? AND id = ?",
    );
    for (const operation of operations) {
      if (operation.kind === "append") {
        const node = operation.node;
        const status = node.metadata["status"];
        const json = nodeJsonOf(operation);
        // One array argument: libsql binds it as is, skipping a spread and flat().
        const result = insert.run([
          sessionId,
          node.id,
          node.seq,
          node.createdAt,
          node.role,
          node.name,
          json?.input ?? encode(node.input),
          json?.output ?? encode(node.output),
          node.caller,
          node.predecessor,
          json?.metadata ?? JSON.stringify(node.metadata),
          typeof status === "string" ? status : null,
          this.ownerHost,
          process.pid,
          this.ownerStore,
        ]);
        if (result.changes > 0) {
          lastSeq = Math.max(lastSeq, node.seq);
          if (node.caller === null) headId = node.id;
        }
        continue;
      }
      const row = select.raw().get(sessionId, operation.id) as Row | undefined;
      if (row === undefined) continue;
      const { fields } = operation;
      const metadata: Record<string, unknown> = { ...(decode(row[3]) as Record<string, unknown>), ...fields.metadata };
      for (const key of Object.keys(metadata)) if (metadata[key] === undefined) delete metadata[key];
      const status = metadata["status"];
      update.run(
        fields.name ?? row[0],
        "input" in fields ? encode(fields.input) : row[1],
        "output" in fields ? encode(fields.output) : row[2],
        JSON.stringify(metadata),
        typeof status === "string" ? status : null,
        sessionId,
        operation.id,
      );
    }
    this.statement("UPDATE rein_sessions SET head_id = ?, last_seq = ?, updated_at = ? WHERE id = ?").run(
      headId,
      lastSeq,
      Date.now(),
      sessionId,
    );
  }

  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      this.assertOpen();
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private guard<T>(work: () => T): T {
    this.assertOpen();
    try {
      return work();
    } catch (error) {
      if (isCorruption(error)) throw new SessionStoreCorruptError(this.location, error);
      throw error;
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new SessionStoreClosedError(this.location);
  }
}
