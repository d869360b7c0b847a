/**
 * The session and node queries of the SQLite store's worker
 * (`rein_sessions`, `rein_nodes`, `rein_consumed`): sessions, heads, node
 * pages and ancestry, the commit of a batch of appends and updates, and
 * marking this store's running nodes interrupted. Runs through the worker's
 * connection (`sqlite-worker-database.ts`).
 *
 * Started from its source text like the rest of the worker
 * (`sqlite-session-worker.ts`): it uses nothing from the module scope, and
 * imports types only.
 * @internal
 */

import type { SqliteWorkerDatabase, SqliteWorkerRow } from "./sqlite-worker-database";
import type { EncodedOperation, SqliteCommitReply, SqliteOperation, SqliteWorkerData } from "./sqlite-worker-protocol";

/** What {@link sqliteSessionQueries} gives the worker. @internal */
export interface SqliteSessionQueries {
  /** Throws the session-not-found fault unless the session exists. */
  assertSession(sessionId: string): void;
  /** The session and node operations, by request name. */
  readonly operations: Record<string, SqliteOperation>;
}

/**
 * The session and node operations. `checkFence` is the run queries' lease
 * fence, checked inside a commit's transaction. Self-contained: see the
 * file comment.
 * @internal
 */
export function sqliteSessionQueries(
  db: SqliteWorkerDatabase,
  data: SqliteWorkerData,
  checkFence: (runId: string, epoch: number) => void,
): SqliteSessionQueries {
  type Row = SqliteWorkerRow;
  const { row, rows, run, write, walStamp, header } = db;

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
    if (found === undefined) throw db.fault("session-not-found", "no session", { sessionId: id });
    return found;
  }

  function assertSession(id: string): void {
    if (row("SELECT 1 FROM rein_sessions WHERE id = ?", id) === undefined) {
      throw db.fault("session-not-found", "no session", { sessionId: id });
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
  ): SqliteCommitReply {
    let counter = -1;
    let head: string | null = null;
    const seqs = write(() => {
      // Checked inside the write lock: no claim can move an epoch before this commit ends.
      if (fences !== null) for (const [runId, epoch] of fences) checkFence(runId, epoch);
      const session = row("SELECT head_id, last_seq FROM rein_sessions WHERE id = ?", sessionId);
      if (session === undefined) throw db.fault("session-not-found", "no session", { sessionId });
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
            throw db.fault("node-conflict", "id taken", { sessionId, nodeId: id });
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

  const operations: Record<string, SqliteOperation> = {
    createSession(id: string, agentId: string | null, title: string | null, now: number): Row {
      return write(() => {
        if (run("INSERT OR IGNORE INTO rein_sessions (id, agent_id, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?)", id, agentId, title, now, now) === 0) {
          throw db.fault("session-exists", "taken", { sessionId: id });
        }
        return sessionRow(id);
      });
    },
    getSession: (id: string): Row => sessionRow(id),
    hasSession: (id: string): boolean => row("SELECT 1 FROM rein_sessions WHERE id = ?", id) !== undefined,
    listSessions: (): Row[] => rows(`SELECT ${SESSION_COLUMNS} FROM rein_sessions s ORDER BY s.updated_at DESC, s.id`),
    deleteSession(id: string): void {
      write(() => {
        if (run("DELETE FROM rein_sessions WHERE id = ?", id) === 0) throw db.fault("session-not-found", "no session", { sessionId: id });
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
      if (found === undefined) throw db.fault("session-not-found", "no session", { sessionId });
      return [found[0], stamp];
    },
    setHead(sessionId: string, nodeId: string | null, now: number): void {
      write(() => {
        assertSession(sessionId);
        if (nodeId !== null && row("SELECT 1 FROM rein_nodes WHERE session_id = ? AND id = ?", sessionId, nodeId) === undefined) {
          throw db.fault("node-not-found", "no node", { sessionId, nodeId });
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
      if (session === undefined) throw db.fault("session-not-found", "no session", { sessionId });
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
    interruptRunning: (): number =>
      write(() =>
        run(
          "UPDATE rein_nodes SET status = 'interrupted', metadata = json_set(metadata, '$.status', 'interrupted') " +
            "WHERE status = 'running' AND owner_store = ?",
          data.ownerStore,
        ),
      ),
  };

  return { assertSession, operations };
}
