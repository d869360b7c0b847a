/**
 * The session and node queries of the Postgres store's worker (everything
 * but the commit, `postgres-worker-commit.ts`): create, read, list and
 * delete sessions, move the head, list branches, read the nodes whole or
 * an ancestry, and consume a once-only key. Runs through the worker's
 * connection (`postgres-worker-database.ts`).
 *
 * Started from its source text like the rest of the worker
 * (`postgres-worker.ts`): it uses nothing from the module scope, and
 * imports types only.
 * @internal
 */

import type { PostgresWorkerDatabase, PostgresWorkerRow } from "./postgres-worker-database";
import type { PostgresOperation, PostgresPoolData, PostgresWorkerData } from "./postgres-worker-protocol";

/**
 * The session and node operations, by request name. Self-contained: see
 * the file comment.
 * @internal
 */
export function postgresWorkerSessions(db: PostgresWorkerDatabase, data: PostgresWorkerData | PostgresPoolData): Record<string, PostgresOperation> {
  type Row = PostgresWorkerRow;
  const { query, run } = db;
  const S = data.schema;
  const notFound = db.sessionNotFound;

  const SESSION_COLUMNS = "id, agent_id, title, created_at, updated_at, head_id, last_seq, node_count";

  /**
   * Node rows as one JSON text made by the server: one string crosses the
   * thread and is parsed once. Each node is `[id, seq, createdAt, role,
   * name, input, inputIsNull, output, outputIsNull, caller, predecessor,
   * metadata]` (input and output are stored as JSON text; SQL NULL is
   * undefined).
   */
  const NODE_JSON =
    "coalesce(json_agg(json_build_array(n.id, n.seq, n.created_at, n.role, n.name, n.input::json, n.input IS NULL, " +
    "n.output::json, n.output IS NULL, n.caller, n.predecessor, n.metadata) ORDER BY n.seq)::text, '[]')";

  /** Nodes read per page by `readNodes`. */
  const PAGE = 20_000;

  async function sessionRow(id: string): Promise<Row> {
    const [found] = (await run(`SELECT ${SESSION_COLUMNS} FROM ${S}.sessions WHERE id = $1`, [id])).rows;
    if (found === undefined) throw notFound(id);
    return found;
  }

  return {
    async createSession(id: string, agentId: string | null, title: string | null): Promise<Row> {
      const now = Date.now();
      const [created] = (
        await run(
          `INSERT INTO ${S}.sessions (id, agent_id, title, created_at, updated_at) VALUES ($1, $2, $3, $4, $4) ON CONFLICT (id) DO NOTHING RETURNING ${SESSION_COLUMNS}`,
          [id, agentId, title, now],
        )
      ).rows;
      if (created === undefined) throw db.fault("session-exists", "taken", { sessionId: id });
      return created;
    },
    getSession: (id: string): Promise<Row> => sessionRow(id),
    async hasSession(id: string): Promise<boolean> {
      return (await run(`SELECT 1 FROM ${S}.sessions WHERE id = $1`, [id])).rows.length > 0;
    },
    async listSessions(): Promise<Row[]> {
      return (await run(`SELECT ${SESSION_COLUMNS} FROM ${S}.sessions ORDER BY updated_at DESC, id COLLATE "C"`)).rows;
    },
    async deleteSession(id: string): Promise<void> {
      // The nodes go with it (ON DELETE CASCADE), in the same statement.
      if ((await run(`DELETE FROM ${S}.sessions WHERE id = $1`, [id])).rowCount === 0) throw notFound(id);
    },
    async head(sessionId: string): Promise<unknown> {
      return (await sessionRow(sessionId))[5];
    },
    async setHead(sessionId: string, nodeId: string | null): Promise<void> {
      const changed = await run(
        `UPDATE ${S}.sessions SET head_id = $2::text, updated_at = $3 WHERE id = $1 ` +
          `AND ($2::text IS NULL OR EXISTS (SELECT 1 FROM ${S}.nodes WHERE session_id = $1 AND id = $2::text))`,
        [sessionId, nodeId, Date.now()],
      );
      if (changed.rowCount === 1) return;
      await sessionRow(sessionId);
      throw db.fault("node-not-found", "no node", { sessionId, nodeId });
    },
    /** `[tipId, length, createdAt]` of each branch tip, in seq order; the walks stop on cycles (UNION). */
    async listBranches(sessionId: string): Promise<Row[]> {
      const { rows } = await run(
        `WITH RECURSIVE tips AS (SELECT t.id, t.seq, t.created_at FROM ${S}.nodes t WHERE t.session_id = $1 AND t.caller IS NULL ` +
          `AND NOT EXISTS (SELECT 1 FROM ${S}.nodes s WHERE s.session_id = $1 AND s.predecessor = t.id)), ` +
          `walk(tip, id, predecessor, top) AS (SELECT n.id, n.id, n.predecessor, n.caller IS NULL FROM ${S}.nodes n JOIN tips ON n.session_id = $1 AND n.id = tips.id ` +
          `UNION SELECT w.tip, n.id, n.predecessor, n.caller IS NULL FROM walk w JOIN ${S}.nodes n ON n.session_id = $1 AND n.id = w.predecessor) ` +
          `SELECT tips.id, (SELECT count(*) FROM walk w WHERE w.tip = tips.id AND w.top), tips.created_at, ` +
          `EXISTS (SELECT 1 FROM ${S}.sessions WHERE id = $1) FROM tips ORDER BY tips.seq`,
        [sessionId],
      );
      if (rows.length === 0) await sessionRow(sessionId);
      return rows.map((found) => [found[0], Number(found[1]), Number(found[2])]);
    },
    /** Every page of the session's nodes, read in one snapshot; each page a JSON text (see NODE_JSON). */
    async readNodes(sessionId: string): Promise<string[]> {
      return db.transaction(async (c) => {
        const pages: string[] = [];
        for (let afterSeq = -Infinity; ; ) {
          const [page] = (
            await query(
              c,
              `SELECT ${NODE_JSON}, max(n.seq)::float8, count(*)::int, EXISTS (SELECT 1 FROM ${S}.sessions WHERE id = $1) ` +
                `FROM (SELECT * FROM ${S}.nodes WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3) n`,
              [sessionId, afterSeq === -Infinity ? -1e15 : afterSeq, PAGE],
            )
          ).rows;
          if (pages.length === 0 && page![3] !== true) throw notFound(sessionId);
          pages.push(page![0] as string);
          if ((page![2] as number) < PAGE) return pages;
          afterSeq = page![1] as number;
        }
      }, " ISOLATION LEVEL REPEATABLE READ READ ONLY");
    },
    /**
     * The ancestry of a node in one recursive query (see
     * `PostgresSessionStore.readAncestry`). UNION, not UNION ALL: a cycle in
     * damaged data revisits a row already found and ends the recursion.
     * `turns` null means all; then the turn counter stays 0, so a cycle of
     * top-level nodes ends too.
     */
    async readAncestry(sessionId: string, nodeId: string, turns: number | null): Promise<string> {
      const [found] = (
        await run(
          `WITH RECURSIVE chain(id, caller, predecessor) AS (` +
            `SELECT id, caller, predecessor FROM ${S}.nodes WHERE session_id = $1 AND id = $2 ` +
            `UNION SELECT n.id, n.caller, n.predecessor FROM chain c JOIN ${S}.nodes n ON n.session_id = $1 AND n.id = c.caller), ` +
            `spine(id, predecessor, turns) AS (` +
            `SELECT id, predecessor, CASE WHEN $3::int IS NULL THEN 0 ELSE (caller IS NULL)::int END FROM chain ` +
            `UNION SELECT n.id, n.predecessor, CASE WHEN $3::int IS NULL THEN 0 ELSE s.turns + (n.caller IS NULL)::int END ` +
            `FROM spine s JOIN ${S}.nodes n ON n.session_id = $1 AND n.id = s.predecessor ` +
            `WHERE $3::int IS NULL OR s.turns + (n.caller IS NULL)::int <= $3::int), ` +
            `tree(id) AS (SELECT id FROM spine UNION SELECT n.id FROM tree t JOIN ${S}.nodes n ON n.session_id = $1 AND n.caller = t.id) ` +
            `SELECT ${NODE_JSON}, EXISTS (SELECT 1 FROM ${S}.sessions WHERE id = $1) ` +
            `FROM tree JOIN ${S}.nodes n ON n.session_id = $1 AND n.id = tree.id`,
          [sessionId, nodeId, turns],
        )
      ).rows;
      if (found![1] !== true) throw notFound(sessionId);
      return found![0] as string;
    },
    async hasNode(sessionId: string, nodeId: string): Promise<boolean> {
      return (await run(`SELECT 1 FROM ${S}.nodes WHERE session_id = $1 AND id = $2`, [sessionId, nodeId])).rows.length > 0;
    },
    /** The insert is the check: of several processes consuming one key, the primary key lets exactly one in. */
    async consumeOnce(sessionId: string, key: string, now: number): Promise<boolean> {
      if (!(await run(`SELECT 1 FROM ${S}.sessions WHERE id = $1`, [sessionId])).rows.length) throw notFound(sessionId);
      const inserted = await run(
        `INSERT INTO ${S}.consumed (key, session_id, consumed_at) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING`,
        [key, sessionId, now],
      );
      return inserted.rowCount === 1;
    },
  };
}
