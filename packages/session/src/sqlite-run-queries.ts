/**
 * The run-lease queries of the SQLite store's worker (`rein_runs`): register,
 * claim, renew and release a run's lease, read runs, and the lease fence a
 * commit checks. Runs through the worker's connection
 * (`sqlite-worker-database.ts`).
 *
 * Started from its source text like the rest of the worker
 * (`sqlite-session-worker.ts`): it uses nothing from the module scope, and
 * imports types only.
 * @internal
 */

import type { SqliteWorkerDatabase, SqliteWorkerRow } from "./sqlite-worker-database";
import type { SqliteOperation, SqliteWorkerData } from "./sqlite-worker-protocol";

/** What {@link sqliteRunQueries} gives the worker. @internal */
export interface SqliteRunQueries {
  /** Throws the lease-lost fault unless the run's lease is at `epoch`; call with the write lock held. */
  checkFence(runId: string, epoch: number): void;
  /** The run operations, by request name. */
  readonly operations: Record<string, SqliteOperation>;
}

/**
 * The run-lease operations. `assertSession` throws the session-not-found
 * fault for a session that does not exist. Self-contained: see the file
 * comment.
 * @internal
 */
export function sqliteRunQueries(
  db: SqliteWorkerDatabase,
  data: SqliteWorkerData,
  assertSession: (sessionId: string) => void,
): SqliteRunQueries {
  type Row = SqliteWorkerRow;
  const { row, rows, run, write } = db;

  function checkFence(runId: string, epoch: number): void {
    const found = row("SELECT lease_epoch FROM rein_runs WHERE run_id = ?", runId);
    const current = found === undefined ? null : Number(found[0]);
    if (current !== epoch) throw db.fault("lease-lost", "lease lost", { runId, heldEpoch: epoch, currentEpoch: current });
  }

  const RUN_COLUMNS = "run_id, session_id, name, state, reason, owner_store IS NOT NULL, lease_until, updated_at, created_at, lease_epoch";

  const operations: Record<string, SqliteOperation> = {
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
          (host === data.ownerHost && Number(pid) !== data.ownerPid && !db.isAlive(Number(pid))) ||
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
  };

  return { checkFence, operations };
}
