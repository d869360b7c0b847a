/**
 * The crash recovery of the Postgres store's worker: marks `interrupted`
 * the nodes left `running` by stores that are gone (found through each
 * store's liveness lock, see `postgres-worker-database.ts`) and, at
 * shutdown, the store's own. Runs through the worker's connection.
 *
 * Started from its source text like the rest of the worker
 * (`postgres-worker.ts`): it uses nothing from the module scope, and
 * imports types only.
 * @internal
 */

import type { PostgresWorkerDatabase } from "./postgres-worker-database";
import type { PostgresPoolData, PostgresWorkerData } from "./postgres-worker-protocol";

/** What {@link postgresWorkerRecovery} gives the worker. @internal */
export interface PostgresWorkerRecovery {
  /** Marks the running nodes of gone owners `interrupted`; how many. */
  interruptAbandoned(): Promise<number>;
  /** Marks this store's own running nodes `interrupted`; how many. */
  interruptRunning(): Promise<number>;
}

/**
 * The recovery statements. Self-contained: see the file comment.
 * @internal
 */
export function postgresWorkerRecovery(db: PostgresWorkerDatabase, data: PostgresWorkerData | PostgresPoolData): PostgresWorkerRecovery {
  const { query } = db;
  const S = data.schema;
  const OWNER_KEY = db.ownerKey;
  const INTERRUPT = `UPDATE ${S}.nodes SET metadata = jsonb_set(metadata, '{status}', '"interrupted"') WHERE status = 'running'`;

  /**
   * Marks `interrupted` the running nodes of every other owner whose
   * liveness lock is free (its connection, and so its process, is gone);
   * nodes of owners still connected are left alone. The lock of a gone
   * owner is held while its nodes are marked, so two stores recovering at
   * once do not both mark, and released after.
   */
  async function interruptAbandoned(): Promise<number> {
    const c = await db.connection();
    const owners = (await query(c, `SELECT DISTINCT owner FROM ${S}.nodes WHERE status = 'running' AND owner IS DISTINCT FROM $1`, [data.owner])).rows;
    let interrupted = 0;
    for (const [owner] of owners) {
      if (owner === null) {
        interrupted += (await query(c, `${INTERRUPT} AND owner IS NULL`)).rowCount;
        continue;
      }
      const [taken] = (await query(c, `SELECT pg_try_advisory_lock(${OWNER_KEY})`, [owner])).rows;
      if (taken![0] !== true) continue;
      try {
        interrupted += (await query(c, `${INTERRUPT} AND owner = $1`, [owner])).rowCount;
      } finally {
        // A lost connection released it already.
        if (db.isCurrent(c)) await query(c, `SELECT pg_advisory_unlock(${OWNER_KEY})`, [owner]);
      }
    }
    return interrupted;
  }

  async function interruptRunning(): Promise<number> {
    return (await db.run(`${INTERRUPT} AND owner = $1`, [data.owner])).rowCount;
  }

  return { interruptAbandoned, interruptRunning };
}
