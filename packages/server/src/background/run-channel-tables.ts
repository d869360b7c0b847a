import type { Pool } from "pg";

/**
 * @internal Creates the run channel's tables in `schema` when missing, under
 * a transaction-scoped advisory lock (many processes may start at once):
 * `rein_run_events` (each run's log, by seq) and `rein_run_controls` (its
 * insert-once control requests), each indexed by `created_at` for pruning.
 */
export async function createRunChannelTables(pool: Pool, schema: string): Promise<void> {
  const s = `"${schema}"`;
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`rein-run-channel:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${s}.rein_run_events (run_id text NOT NULL, seq integer NOT NULL, event jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (run_id, seq))`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${s}.rein_run_controls (run_id text NOT NULL, subject text NOT NULL, action text NOT NULL, tool_call_id text, created_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (run_id, subject))`);
    // What pruning deletes by.
    await client.query(`CREATE INDEX IF NOT EXISTS rein_run_events_created ON ${s}.rein_run_events (created_at)`);
    await client.query(`CREATE INDEX IF NOT EXISTS rein_run_controls_created ON ${s}.rein_run_controls (created_at)`);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
