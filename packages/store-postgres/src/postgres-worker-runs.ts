/**
 * The run-lease queries of the Postgres store's worker (`runs`): register,
 * claim, renew and release a run's lease, read runs, and the lease fence a
 * commit checks. Runs through the worker's connection
 * (`postgres-worker-database.ts`).
 *
 * Started from its source text like the rest of the worker
 * (`postgres-worker.ts`): it uses nothing from the module scope, and
 * imports types only.
 * @internal
 */

import type { PostgresWorkerClient, PostgresWorkerDatabase, PostgresWorkerRow } from "./postgres-worker-database";
import type { PostgresOperation, PostgresPoolData, PostgresWorkerData } from "./postgres-worker-protocol";

/** What {@link postgresWorkerRuns} gives the worker. @internal */
export interface PostgresWorkerRuns {
  /**
   * Throws the lease-lost fault unless each run's lease is at the fence's
   * epoch (`[runId, epoch]` pairs); the runs' rows stay locked (`FOR
   * SHARE`) until the transaction of `c` ends.
   */
  checkFences(c: PostgresWorkerClient, fences: readonly (readonly [string, number])[]): Promise<void>;
  /** The run operations, by request name. */
  readonly operations: Record<string, PostgresOperation>;
}

/**
 * The run-lease operations. Self-contained: see the file comment.
 * @internal
 */
export function postgresWorkerRuns(db: PostgresWorkerDatabase, data: PostgresWorkerData | PostgresPoolData): PostgresWorkerRuns {
  type Row = PostgresWorkerRow;
  type Client = PostgresWorkerClient;
  const { query, run, transaction } = db;
  const S = data.schema;
  const OWNER_KEY = db.ownerKey;
  const RUN_COLUMNS = "run_id, session_id, name, state, reason, owner IS NOT NULL, lease_until, updated_at, created_at, lease_epoch";

  async function checkFences(c: Client, fences: readonly (readonly [string, number])[]): Promise<void> {
    const { rows } = await query(c, `SELECT run_id, lease_epoch FROM ${S}.runs WHERE run_id = ANY($1::text[]) FOR SHARE`, [fences.map(([runId]) => runId)]);
    const current = new Map(rows.map((found) => [String(found[0]), Number(found[1])]));
    for (const [runId, epoch] of fences) {
      const now = current.get(runId) ?? null;
      if (now !== epoch) throw db.fault("lease-lost", "lease lost", { runId, heldEpoch: epoch, currentEpoch: now });
    }
  }

  const operations: Record<string, PostgresOperation> = {
    async registerRun(runId: string, sessionId: string, name: string, leaseMs: number, now: number): Promise<void> {
      const inserted = await run(
        `INSERT INTO ${S}.runs (run_id, session_id, name, state, owner, lease_until, created_at, updated_at) ` +
          `SELECT $1, $2, $3, 'running', $4, $5, $6, $6 WHERE EXISTS (SELECT 1 FROM ${S}.sessions WHERE id = $2)`,
        [runId, sessionId, name, data.owner, now + leaseMs, now],
      );
      if (inserted.rowCount === 0) throw db.sessionNotFound(sessionId);
    },
    /**
     * Takes the lease with the run row locked (FOR UPDATE), so of several
     * claimants exactly one finds it free: free when nobody holds it, it
     * expired, or its holder's liveness lock can be taken (that store's
     * connection, and so its process, is gone).
     */
    async claimRun(runId: string, states: readonly string[], leaseMs: number, now: number, fromEpoch: number | null = null): Promise<boolean> {
      return transaction(async (c) => {
        const [found] = (await query(c, `SELECT state, owner, lease_until, lease_epoch FROM ${S}.runs WHERE run_id = $1 FOR UPDATE`, [runId])).rows;
        if (found === undefined || !states.includes(String(found[0]))) return false;
        if (fromEpoch !== null && Number(found[3]) !== fromEpoch) return false;
        const owner = found[1] as string | null;
        let free = owner === null || found[2] === null || Number(found[2]) < now;
        if (!free && owner !== data.owner) {
          const [taken] = (await query(c, `SELECT pg_try_advisory_lock(${OWNER_KEY})`, [owner])).rows;
          if (taken![0] === true) {
            free = true;
            await query(c, `SELECT pg_advisory_unlock(${OWNER_KEY})`, [owner]);
          }
        }
        if (!free) return false;
        await query(c, `UPDATE ${S}.runs SET state = 'running', reason = NULL, owner = $2, lease_until = $3, updated_at = $4, lease_epoch = lease_epoch + 1 WHERE run_id = $1`, [
          runId,
          data.owner,
          now + leaseMs,
          now,
        ]);
        return true;
      });
    },
    async renewRun(runId: string, leaseMs: number, now: number, epoch: number | null = null): Promise<boolean> {
      const updated = await run(
        `UPDATE ${S}.runs SET lease_until = $2, updated_at = $3 WHERE run_id = $1 AND owner = $4 AND state = 'running' AND ($5::bigint IS NULL OR lease_epoch = $5::bigint)`,
        [runId, now + leaseMs, now, data.owner, epoch],
      );
      return updated.rowCount === 1;
    },
    /** Given `epoch`, the run's row is locked and its epoch checked before the release, in one transaction. */
    async releaseRun(runId: string, state: string, reason: string | null, now: number, epoch: number | null = null): Promise<void> {
      const text = `UPDATE ${S}.runs SET state = $2, reason = $3, owner = NULL, lease_until = NULL, updated_at = $4 WHERE run_id = $1 AND owner = $5`;
      const values = [runId, state, reason, now, data.owner];
      if (epoch === null) {
        await run(text, values);
        return;
      }
      await transaction(async (c) => {
        await checkFences(c, [[runId, epoch]]);
        await query(c, text, values);
      });
    },
    async getRun(runId: string): Promise<Row | undefined> {
      return (await run(`SELECT ${RUN_COLUMNS} FROM ${S}.runs WHERE run_id = $1`, [runId])).rows[0];
    },
    async listRuns(states: readonly string[] | null): Promise<Row[]> {
      return (await run(`SELECT ${RUN_COLUMNS} FROM ${S}.runs WHERE $1::text[] IS NULL OR state = ANY($1::text[]) ORDER BY created_at, run_id`, [states])).rows;
    },
  };

  return { checkFences, operations };
}
