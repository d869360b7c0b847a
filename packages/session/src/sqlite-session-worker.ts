/**
 * The SQL side of {@link SessionStore}, run in a worker thread that owns
 * the one `libsql` connection of a store (`sqlite-worker-loop.ts` is the
 * thread's request loop, `sqlite-connection.ts` the store's end).
 *
 * Why a thread: libsql 0.5.29 keeps a connection (and its three file
 * descriptors: the database, `-wal`, `-shm`) open while any prepared
 * statement object is still alive, i.e. until garbage collection. The
 * thread that holds the connection can collect its statements and close it
 * at once, and ending the thread releases everything regardless.
 *
 * {@link sqliteSessionOperations} is started from its source text
 * (`Function.prototype.toString`), so it must not use anything from the
 * module scope: every import comes through `load`, and types only.
 * @internal
 */

import type { MessagePort } from "node:worker_threads";

/** What the worker is started with. @internal */
export interface SqliteWorkerData {
  readonly libsqlPath: string;
  readonly location: string;
  /** busy_timeout of one attempt to take the write lock, in ms. */
  readonly attemptTimeoutMs: number;
  readonly migrations: readonly { version: number; name: string; sql: string }[];
  readonly applicationId: number;
  readonly ownerHost: string;
  readonly ownerPid: number;
  readonly ownerStore: string;
  readonly port: MessagePort;
  readonly asyncPort: MessagePort;
  readonly signal: SharedArrayBuffer;
}

/** A request: `id` 0 is answered on the synchronous port, any other on the async one. @internal */
export interface SqliteRequest {
  readonly id: number;
  readonly op: string;
  readonly args: readonly unknown[];
}

/** A failure as the worker reports it; `kind` names a Rein fault, else it is an SQLite error. @internal */
export interface SqliteFailure {
  readonly kind: string;
  readonly message: string;
  readonly code?: string;
  readonly rawCode?: number;
  readonly data?: unknown;
}

/** A reply to a {@link SqliteRequest}. @internal */
export interface SqliteReply {
  readonly id: number;
  readonly value?: unknown;
  readonly failure?: SqliteFailure;
}

/**
 * An append as sent to the worker: `["a", id, createdAt, role, name, input,
 * output, caller, predecessor, metadata, status]`, values as JSON text.
 * An update: `["u", id, name | null, hasInput, input, hasOutput, output,
 * metadataSet | null, metadataRemove | null]`.
 * @internal
 */
export type EncodedOperation = readonly unknown[];


/** What the worker's loop runs requests with. @internal */
export interface SqliteOperations {
  /** Runs one operation; throws what went wrong. */
  run(op: string, args: readonly unknown[]): unknown;
  /** The report of a failure; forgets the prepared statements, which may be left mid-run. */
  failed(error: unknown): SqliteFailure;
  /** Called when no request waits: background work (the WAL checkpoint) that no caller should wait for. */
  idle(): void;
}

/**
 * The SQL side of the worker: opens the connection on `open` and answers
 * every store operation. Self-contained: see the file comment.
 * @internal
 */
export function sqliteSessionOperations(load: (id: string) => unknown, data: SqliteWorkerData): SqliteOperations {
  const Database = load(data.libsqlPath) as typeof import("libsql");
  const fs = load("node:fs") as typeof import("node:fs");
  type Row = unknown[];
  type Statement = import("libsql").Statement;

  class Fault extends Error {
    constructor(
      readonly kind: string,
      message: string,
      readonly data?: unknown,
    ) {
      super(message);
    }
  }

  let db: import("libsql").Database | undefined;
  const statements = new Map<string, Statement>();
  /** Owners whose running nodes must be marked interrupted once a write lock is held. */
  let pendingRecovery: Row[] = [];
  /** Write transactions since the last checkpoint; {@link idle} checkpoints past CHECKPOINT_AFTER_WRITES. */
  let writesSinceCheckpoint = 0;
  // A few hundred small transactions (~1,000 WAL pages, SQLite's own default threshold).
  const CHECKPOINT_AFTER_WRITES = 100;

  /**
   * The WAL-index header: the first 48 bytes of the `-shm` file (SQLite's
   * file format, `walformat.html`), rewritten by every commit of any
   * connection; its change counter (bytes 8–11) counts commits. The store
   * compares stamps to know nothing was committed since it read a head.
   */
  let shm: number | undefined;
  const header = Buffer.alloc(48);

  /** The header as text (latin1), or null when it cannot be read. */
  function walStamp(): string | null {
    if (shm === undefined) {
      // Opened on first use (SQLite makes the file with the first WAL transaction); in-memory databases have none.
      if (data.location.startsWith(":")) return null;
      try {
        shm = fs.openSync(`${data.location}-shm`, "r");
      } catch {
        return null;
      }
    }
    try {
      if (fs.readSync(shm, header, 0, 48, 0) !== 48) return null;
    } catch {
      return null;
    }
    return header.toString("latin1");
  }

  function connection(): import("libsql").Database {
    if (db === undefined) throw new Fault("closed", "closed");
    return db;
  }

  /** A cached statement; a reader is switched to raw rows once, when prepared. */
  function statement(sql: string, reader = false): Statement {
    let prepared = statements.get(sql);
    if (prepared === undefined) {
      prepared = connection().prepare(sql);
      if (reader) prepared.raw();
      statements.set(sql, prepared);
    }
    return prepared;
  }

  function rows(sql: string, ...params: unknown[]): Row[] {
    return statement(sql, true).all(params) as Row[];
  }

  function row(sql: string, ...params: unknown[]): Row | undefined {
    return statement(sql, true).get(params) as Row | undefined;
  }

  function run(sql: string, ...params: unknown[]): number {
    return statement(sql).run(params).changes;
  }

  /**
   * Runs `work` in a BEGIN IMMEDIATE transaction. Every write goes through
   * here: a statement only ever writes while the lock is held, so no write
   * statement is left half-run by SQLITE_BUSY, and the transaction is always
   * closed — committed, or rolled back unless SQLite already did (a full
   * disk rolls the transaction back by itself).
   */
  function write<T>(work: () => T): T {
    const database = connection();
    database.exec("BEGIN IMMEDIATE");
    try {
      if (pendingRecovery.length > 0) markInterrupted(pendingRecovery);
      const result = work();
      database.exec("COMMIT");
      writesSinceCheckpoint++;
      pendingRecovery = [];
      return result;
    } catch (error) {
      if (database.inTransaction) {
        try {
          database.exec("ROLLBACK");
        } catch {
          /* the original error says what went wrong */
        }
      }
      throw error;
    }
  }

  function isAlive(pid: number): boolean {
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "EPERM";
    }
  }

  function markInterrupted(owners: Row[]): void {
    for (const [host, pid] of owners) {
      run(
        "UPDATE rein_nodes SET status = 'interrupted', metadata = json_set(metadata, '$.status', 'interrupted') " +
          "WHERE status = 'running' AND owner_host IS ? AND owner_pid IS ?",
        host,
        pid,
      );
    }
  }

  function currentVersion(): number {
    const found = row("SELECT max(version) FROM rein_migrations");
    return found === undefined || found[0] === null ? 0 : Number(found[0]);
  }

  function assertKnownVersion(): void {
    const version = currentVersion();
    const supported = data.migrations[data.migrations.length - 1]!.version;
    if (version > supported) throw new Fault("schema-version", "newer schema", { foundVersion: version, supportedVersion: supported });
  }

  function open(): void {
    db = new Database(data.location, { timeout: data.attemptTimeoutMs });
    const tables = rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").map((found) =>
      String(found[0]),
    );
    const applicationId = Number(row("PRAGMA application_id")![0]);
    const known = tables.includes("rein_migrations");
    if (!known && (tables.length > 0 || (applicationId !== 0 && applicationId !== data.applicationId))) {
      throw new Fault("foreign", "foreign database", { tables: tables.slice(0, 10) });
    }
    if (known) assertKnownVersion();
    const inMemory = data.location.startsWith(":");
    if (!inMemory && String(row("PRAGMA journal_mode")![0]).toLowerCase() !== "wal") row("PRAGMA journal_mode = WAL");
    // In WAL mode NORMAL keeps every commit across a process crash; only a
    // power loss can drop the last transactions.
    db.exec("PRAGMA synchronous = NORMAL");
    // Checkpoints run when the worker is idle (see idle()), after the commit
    // was answered, instead of inside the commit that crosses the threshold.
    if (!inMemory) db.exec("PRAGMA wal_autocheckpoint = 0");

    const latest = data.migrations[data.migrations.length - 1]!.version;
    if (!known || currentVersion() < latest || applicationId !== data.applicationId) {
      write(() => {
        db!.exec("CREATE TABLE IF NOT EXISTS rein_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
        // Re-read inside the write lock: another process may have migrated meanwhile.
        assertKnownVersion();
        const current = currentVersion();
        for (const migration of data.migrations) {
          if (migration.version <= current) continue;
          db!.exec(migration.sql);
          run("INSERT INTO rein_migrations (version, name, applied_at) VALUES (?, ?, ?)", migration.version, migration.name, Date.now());
        }
        db!.exec(`PRAGMA application_id = ${data.applicationId}`);
      });
    }
    // Running nodes of processes on this host that are gone (or of unknown
    // owner) were interrupted by a crash. Found with a read; marked now if the
    // lock is free, else with the next write.
    pendingRecovery = rows("SELECT DISTINCT owner_host, owner_pid FROM rein_nodes WHERE status = 'running'").filter(
      ([host, pid]) =>
        host === null || pid === null || (host === data.ownerHost && Number(pid) !== data.ownerPid && !isAlive(Number(pid))),
    );
    if (pendingRecovery.length > 0) {
      try {
        write(() => undefined);
      } catch (error) {
        if ((error as { code?: unknown }).code !== "SQLITE_BUSY") throw error;
      }
    }
  }

  const SESSION_COLUMNS =
    // node_count is kept by every commit: opening a session of a million nodes counts nothing.
    "s.id, s.agent_id, s.title, s.created_at, s.updated_at, s.head_id, s.last_seq, s.node_count";

  /**
   * Node rows as one JSON text (the stored values are JSON text already):
   * one string crosses the thread and is parsed once, instead of a
   * structured clone of every row and a parse per field. Each node is
   * `[id, seq, createdAt, role, name, input, inputIsNull, output,
   * outputIsNull, caller, predecessor, metadata]`.
   */
  function encodeNodes(found: Row[]): string {
    let json = "[";
    for (let index = 0; index < found.length; index++) {
      const node = found[index]!;
      json +=
        (index === 0 ? "[" : ",[") +
        JSON.stringify(node[0]) + "," + node[1] + "," + node[2] + "," + JSON.stringify(node[3]) + "," + JSON.stringify(node[4]) + "," +
        (node[5] === null ? "null,1," : node[5] + ",0,") +
        (node[6] === null ? "null,1," : node[6] + ",0,") +
        JSON.stringify(node[7]) + "," + JSON.stringify(node[8]) + "," + node[9] + "]";
    }
    return json + "]";
  }

  function sessionRow(id: string): Row {
    const found = row(`SELECT ${SESSION_COLUMNS} FROM rein_sessions s WHERE s.id = ?`, id);
    if (found === undefined) throw new Fault("session-not-found", "no session", { sessionId: id });
    return found;
  }

  function assertSession(id: string): void {
    if (row("SELECT 1 FROM rein_sessions WHERE id = ?", id) === undefined) {
      throw new Fault("session-not-found", "no session", { sessionId: id });
    }
  }

  /**
   * Commits and returns `[seqs, headId, stamp]`: the stamp is the WAL header
   * right after this commit when no other connection committed in between
   * (the change counter moved by exactly one), else null.
   */
  function commit(
    sessionId: string,
    operations: readonly EncodedOperation[],
    fences: readonly (readonly [string, number])[] | null = null,
  ): [[string, number][], string | null, string | null] {
    let counter = -1;
    let head: string | null = null;
    const seqs = write(() => {
      // Checked inside the write lock: no claim can move an epoch before this commit ends.
      if (fences !== null) for (const [runId, epoch] of fences) checkFence(runId, epoch);
      const session = row("SELECT head_id, last_seq FROM rein_sessions WHERE id = ?", sessionId);
      if (session === undefined) throw new Fault("session-not-found", "no session", { sessionId });
      let headId = session[0] as string | null;
      let lastSeq = Number(session[1]);
      const seqs: [string, number][] = [];
      for (const operation of operations) {
        const id = operation[1] as string;
        if (operation[0] === "a") {
          const seq = lastSeq + 1;
          const inserted = run(
            "INSERT INTO rein_nodes (session_id, id, seq, created_at, role, name, input, output, caller, predecessor, " +
              "metadata, status, owner_host, owner_pid, owner_store) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) " +
              "ON CONFLICT (session_id, id) DO NOTHING",
            sessionId,
            id,
            seq,
            operation[2],
            operation[3],
            operation[4],
            operation[5],
            operation[6],
            operation[7],
            operation[8],
            operation[9],
            operation[10],
            data.ownerHost,
            data.ownerPid,
            data.ownerStore,
          );
          if (inserted === 0) {
            // The same node sent again (a retry after a commit whose reply was
            // lost) is harmless; another node under a taken id is an error.
            const stored = row("SELECT created_at, role, name, caller, predecessor FROM rein_nodes WHERE session_id = ? AND id = ?", sessionId, id)!;
            const same =
              Number(stored[0]) === operation[2] &&
              stored[1] === operation[3] &&
              stored[2] === operation[4] &&
              stored[3] === operation[7] &&
              stored[4] === operation[8];
            if (same) continue;
            throw new Fault("node-conflict", "id taken", { sessionId, nodeId: id });
          }
          lastSeq = seq;
          seqs.push([id, seq]);
          if (operation[7] === null) headId = id;
          continue;
        }
        const stored = row("SELECT name, input, output, metadata FROM rein_nodes WHERE session_id = ? AND id = ?", sessionId, id);
        if (stored === undefined) continue;
        const metadata = JSON.parse(String(stored[3])) as Record<string, unknown>;
        if (operation[7] !== null) Object.assign(metadata, JSON.parse(operation[7] as string));
        if (operation[8] !== null) for (const key of operation[8] as string[]) delete metadata[key];
        const status = metadata["status"];
        run(
          "UPDATE rein_nodes SET name = ?, input = ?, output = ?, metadata = ?, status = ? WHERE session_id = ? AND id = ?",
          operation[2] ?? stored[0],
          operation[3] === true ? operation[4] : stored[1],
          operation[5] === true ? operation[6] : stored[2],
          JSON.stringify(metadata),
          typeof status === "string" ? status : null,
          sessionId,
          id,
        );
      }
      run(
        "UPDATE rein_sessions SET head_id = ?, last_seq = ?, updated_at = ?, node_count = node_count + ? WHERE id = ?",
        headId,
        lastSeq,
        Date.now(),
        seqs.length,
        sessionId,
      );
      // The write lock is held: nobody commits before this transaction does.
      if (walStamp() !== null) counter = header.readUInt32LE(8);
      head = headId;
      return seqs;
    });
    const stamp = counter < 0 ? null : walStamp();
    return [seqs, head, stamp !== null && header.readUInt32LE(8) === ((counter + 1) >>> 0) ? stamp : null];
  }

  /** Throws the lease-lost fault unless the run's lease is at `epoch`; call with the write lock held. */
  function checkFence(runId: string, epoch: number): void {
    const found = row("SELECT lease_epoch FROM rein_runs WHERE run_id = ?", runId);
    const current = found === undefined ? null : Number(found[0]);
    if (current !== epoch) throw new Fault("lease-lost", "lease lost", { runId, heldEpoch: epoch, currentEpoch: current });
  }

  const RUN_COLUMNS = "run_id, session_id, name, state, reason, owner_store IS NOT NULL, lease_until, updated_at, created_at, lease_epoch";

  const operations: Record<string, (...args: never[]) => unknown> = {
    open,
    createSession(id: string, agentId: string | null, title: string | null, now: number): Row {
      return write(() => {
        if (run("INSERT OR IGNORE INTO rein_sessions (id, agent_id, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?)", id, agentId, title, now, now) === 0) {
          throw new Fault("session-exists", "taken", { sessionId: id });
        }
        return sessionRow(id);
      });
    },
    getSession: (id: string): Row => sessionRow(id),
    hasSession: (id: string): boolean => row("SELECT 1 FROM rein_sessions WHERE id = ?", id) !== undefined,
    listSessions: (): Row[] => rows(`SELECT ${SESSION_COLUMNS} FROM rein_sessions s ORDER BY s.updated_at DESC, s.id`),
    deleteSession(id: string): void {
      write(() => {
        if (run("DELETE FROM rein_sessions WHERE id = ?", id) === 0) throw new Fault("session-not-found", "no session", { sessionId: id });
        run("DELETE FROM rein_nodes WHERE session_id = ?", id);
        run("DELETE FROM rein_runs WHERE session_id = ?", id);
        run("DELETE FROM rein_consumed WHERE session_id = ?", id);
      });
    },
    /** The insert is the check: of several processes consuming one key, the primary key lets exactly one in. */
    consumeOnce(sessionId: string, key: string, now: number): boolean {
      return write(() => {
        assertSession(sessionId);
        return run("INSERT INTO rein_consumed (key, session_id, consumed_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING", key, sessionId, now) === 1;
      });
    },
    /** `[headId, stamp]`: the stamp is read first, so the head is at least as new as it. */
    head(sessionId: string): unknown {
      const stamp = walStamp();
      const found = row("SELECT head_id FROM rein_sessions WHERE id = ?", sessionId);
      if (found === undefined) throw new Fault("session-not-found", "no session", { sessionId });
      return [found[0], stamp];
    },
    setHead(sessionId: string, nodeId: string | null, now: number): void {
      write(() => {
        assertSession(sessionId);
        if (nodeId !== null && row("SELECT 1 FROM rein_nodes WHERE session_id = ? AND id = ?", sessionId, nodeId) === undefined) {
          throw new Fault("node-not-found", "no node", { sessionId, nodeId });
        }
        run("UPDATE rein_sessions SET head_id = ?, updated_at = ? WHERE id = ?", nodeId, now, sessionId);
      });
    },
    /**
     * One page of the session's nodes in (seq, rowid) order after the given
     * key, encoded by {@link encodeNodes}. Returns `[json, lastSeq,
     * lastRowid, count]`.
     */
    readNodesPage(sessionId: string, afterSeq: number, afterRowid: number, limit: number): Row {
      if (afterSeq < 0) assertSession(sessionId);
      const found = rows(
        "SELECT id, seq, created_at, role, name, input, output, caller, predecessor, metadata, rowid FROM rein_nodes " +
          "WHERE session_id = ? AND (seq, rowid) > (?, ?) ORDER BY seq, rowid LIMIT ?",
        sessionId,
        afterSeq,
        afterRowid,
        limit,
      );
      const json = encodeNodes(found);
      const last = found[found.length - 1];
      return [json, last === undefined ? afterSeq : last[1], last === undefined ? afterRowid : last[10], found.length];
    },
    /**
     * The nodes of `readAncestry` (see `ancestry.ts` for the set), as
     * `readNodesPage` encodes them, in one recursive query along the
     * caller and predecessor indexes. `UNION` (not `UNION ALL`) ends the
     * walk on cyclic links in damaged data (see the `turns` bound for the
     * one case it cannot). Returns `[json, count]`.
     */
    readAncestry(sessionId: string, nodeId: string, turns: number): Row {
      const session = row("SELECT last_seq FROM rein_sessions WHERE id = ?", sessionId);
      if (session === undefined) throw new Fault("session-not-found", "no session", { sessionId });
      // A spine never holds more top-level nodes than the session has nodes: the
      // bound also ends a predecessor cycle of top-level nodes in damaged data,
      // whose rows differ in the running count and so escape UNION.
      turns = Math.min(turns, Number(session[0]) + 2);
      const found = rows(
        "WITH RECURSIVE " +
          "chain(id, caller) AS (" +
          "SELECT id, caller FROM rein_nodes WHERE session_id = ?1 AND id = ?2 " +
          "UNION SELECT n.id, n.caller FROM chain c CROSS JOIN rein_nodes n ON n.session_id = ?1 AND n.id = c.caller), " +
          "spine(id, predecessor, turns) AS (" +
          "SELECT n.id, n.predecessor, n.caller IS NULL FROM chain c CROSS JOIN rein_nodes n ON n.session_id = ?1 AND n.id = c.id " +
          "UNION SELECT n.id, n.predecessor, s.turns + (n.caller IS NULL) FROM spine s CROSS JOIN rein_nodes n ON n.session_id = ?1 AND n.id = s.predecessor " +
          "WHERE s.turns + (n.caller IS NULL) <= ?3), " +
          "inside(id) AS (" +
          "SELECT id FROM spine UNION SELECT n.id FROM inside i CROSS JOIN rein_nodes n ON n.session_id = ?1 AND n.caller = i.id) " +
          // CROSS JOIN keeps the walk's order: from the few rows found so far into the indexes, never a scan of the session.
          "SELECT n.id, n.seq, n.created_at, n.role, n.name, n.input, n.output, n.caller, n.predecessor, n.metadata " +
          "FROM inside i CROSS JOIN rein_nodes n ON n.session_id = ?1 AND n.id = i.id ORDER BY n.seq",
        sessionId,
        nodeId,
        turns,
      );
      return [encodeNodes(found), found.length];
    },
    hasNode: (sessionId: string, nodeId: string): boolean =>
      row("SELECT 1 FROM rein_nodes WHERE session_id = ? AND id = ?", sessionId, nodeId) !== undefined,
    commit,
    registerRun(runId: string, sessionId: string, name: string, leaseMs: number, now: number): void {
      write(() => {
        assertSession(sessionId);
        run(
          "INSERT INTO rein_runs (run_id, session_id, name, state, owner_host, owner_pid, owner_store, lease_until, created_at, updated_at) " +
            "VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?)",
          runId, sessionId, name, data.ownerHost, data.ownerPid, data.ownerStore, now + leaseMs, now, now,
        );
      });
    },
    /**
     * Takes the lease inside the write lock, so of several claimants exactly
     * one finds it free: free when nobody holds it, it expired, or its holder
     * is a process of this host that is gone (another pid that is not alive,
     * or this pid under a store id not open in this process: an earlier
     * process that had the same pid, as after a container restart).
     */
    claimRun(runId: string, states: readonly string[], leaseMs: number, now: number, openHere: readonly string[] = [], fromEpoch: number | null = null): boolean {
      return write(() => {
        const found = row("SELECT state, owner_host, owner_pid, owner_store, lease_until, lease_epoch FROM rein_runs WHERE run_id = ?", runId);
        if (found === undefined || !states.includes(String(found[0]))) return false;
        if (fromEpoch !== null && Number(found[5]) !== fromEpoch) return false;
        const [, host, pid, store, until] = found;
        const free =
          store === null ||
          until === null ||
          Number(until) < now ||
          (host === data.ownerHost && Number(pid) !== data.ownerPid && !isAlive(Number(pid))) ||
          // Our own pid, but no store of this process holds it: an earlier process with this pid (a container restart).
          (host === data.ownerHost && Number(pid) === data.ownerPid && !openHere.includes(String(store)));
        if (!free) return false;
        run(
          "UPDATE rein_runs SET state = 'running', reason = NULL, owner_host = ?, owner_pid = ?, owner_store = ?, lease_until = ?, updated_at = ?, " +
            "lease_epoch = lease_epoch + 1 WHERE run_id = ?",
          data.ownerHost, data.ownerPid, data.ownerStore, now + leaseMs, now, runId,
        );
        return true;
      });
    },
    renewRun: (runId: string, leaseMs: number, now: number, epoch: number | null = null): boolean =>
      write(
        () =>
          run(
            "UPDATE rein_runs SET lease_until = ?, updated_at = ? WHERE run_id = ? AND owner_store = ? AND state = 'running' AND (? IS NULL OR lease_epoch = ?)",
            now + leaseMs,
            now,
            runId,
            data.ownerStore,
            epoch,
            epoch,
          ) === 1,
      ),
    releaseRun(runId: string, state: string, reason: string | null, now: number, epoch: number | null = null): void {
      write(() => {
        if (epoch !== null) checkFence(runId, epoch);
        run(
          "UPDATE rein_runs SET state = ?, reason = ?, owner_host = NULL, owner_pid = NULL, owner_store = NULL, lease_until = NULL, updated_at = ? " +
            "WHERE run_id = ? AND owner_store = ?",
          state, reason, now, runId, data.ownerStore,
        );
      });
    },
    getRun: (runId: string): Row | undefined => row(`SELECT ${RUN_COLUMNS} FROM rein_runs WHERE run_id = ?`, runId),
    // Filtered in SQL (the (state, created_at) index): completed runs pile up and are not read for nothing.
    listRuns: (states: readonly string[] | null): Row[] =>
      states === null
        ? rows(`SELECT ${RUN_COLUMNS} FROM rein_runs ORDER BY created_at, run_id`)
        : states.length === 0
          ? []
          : rows(
              `SELECT ${RUN_COLUMNS} FROM rein_runs ` +
                `WHERE state IN (${states.map(() => "?").join(", ")}) ORDER BY created_at, run_id`,
              ...states,
            ),
    interruptRunning: (): number =>
      write(() =>
        run(
          "UPDATE rein_nodes SET status = 'interrupted', metadata = json_set(metadata, '$.status', 'interrupted') " +
            "WHERE status = 'running' AND owner_store = ?",
          data.ownerStore,
        ),
      ),
    close(checkpoint = true): void {
      if (db === undefined) return;
      // A file refused at open (foreign, newer, damaged) is left exactly as found.
      if (checkpoint && !data.location.startsWith(":")) {
        try {
          // Best effort: another connection may be reading; the last one to
          // close checkpoints and removes the -wal file anyway.
          db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        } catch {
          /* left to the last connection */
        }
      }
      statements.clear();
      db.close();
      db = undefined;
      if (shm !== undefined) {
        fs.closeSync(shm);
        shm = undefined;
      }
    },
  };

  function failureOf(error: unknown): SqliteFailure {
    if (error instanceof Fault) return { kind: error.kind, message: error.message, data: error.data };
    const { message, code, rawCode } = error as { message?: unknown; code?: unknown; rawCode?: unknown };
    return {
      kind: "sqlite",
      message: typeof message === "string" ? message : String(error),
      ...(typeof code === "string" ? { code } : {}),
      ...(typeof rawCode === "number" ? { rawCode } : {}),
    };
  }

  return {
    run(op: string, args: readonly unknown[]): unknown {
      const operation = operations[op];
      if (operation === undefined) throw new Fault("internal", `unknown operation ${op}`);
      return operation(...(args as never[]));
    },
    failed(error: unknown): SqliteFailure {
      // A statement that failed may be left mid-run by libsql (it resets a
      // statement only before its next run): prepare afresh next time.
      statements.clear();
      return failureOf(error);
    },
    idle(): void {
      if (writesSinceCheckpoint < CHECKPOINT_AFTER_WRITES || db === undefined) return;
      writesSinceCheckpoint = 0;
      try {
        // PASSIVE: copies what it can without waiting for readers or writers of other processes.
        db.exec("PRAGMA wal_checkpoint(PASSIVE)");
      } catch {
        /* a busy or failed checkpoint is retried after the next writes */
      }
    },
  };
}
