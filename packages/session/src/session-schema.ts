/**
 * The schema of a SQLite session store, as ordered migrations. Applied
 * migrations are recorded in `rein_migrations`; a file whose highest
 * version is above {@link SESSION_SCHEMA_VERSION} was written by a newer Rein
 * and is refused untouched.
 * @internal
 */
export const SESSION_MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: "sessions and nodes",
    sql: `
      CREATE TABLE rein_sessions (
        id TEXT PRIMARY KEY,
        agent_id TEXT,
        title TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        head_id TEXT,
        last_seq INTEGER NOT NULL DEFAULT -1
      );
      CREATE TABLE rein_nodes (
        session_id TEXT NOT NULL,
        id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        role TEXT NOT NULL,
        name TEXT NOT NULL,
        input TEXT,
        output TEXT,
        caller TEXT,
        predecessor TEXT,
        metadata TEXT NOT NULL,
        status TEXT,
        owner_host TEXT,
        owner_pid INTEGER,
        owner_store TEXT,
        PRIMARY KEY (session_id, id)
      );
      CREATE INDEX rein_nodes_by_seq ON rein_nodes (session_id, seq);
      CREATE INDEX rein_nodes_running ON rein_nodes (owner_host, owner_pid) WHERE status = 'running';
    `,
  },
  {
    version: 2,
    name: "ancestry index and node count",
    // History is read along caller links (readAncestry; predecessor and caller
    // ids are looked up by primary key), never the whole session; the node
    // count is kept per session instead of counted on every getSession.
    sql: `
      CREATE INDEX rein_nodes_by_caller ON rein_nodes (session_id, caller);
      ALTER TABLE rein_sessions ADD COLUMN node_count INTEGER NOT NULL DEFAULT 0;
      UPDATE rein_sessions SET node_count = (SELECT count(*) FROM rein_nodes n WHERE n.session_id = rein_sessions.id);
    `,
  },
  {
    version: 3,
    name: "resumable runs and their leases",
    // One row per resumable run: its state and the lease of the worker that
    // owns it (owner_* null when nobody does). Older files gain the table empty.
    sql: `
      CREATE TABLE rein_runs (
        run_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        name TEXT NOT NULL,
        state TEXT NOT NULL,
        reason TEXT,
        owner_host TEXT,
        owner_pid INTEGER,
        owner_store TEXT,
        lease_until INTEGER,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX rein_runs_by_state ON rein_runs (state, created_at);
      CREATE INDEX rein_runs_by_session ON rein_runs (session_id);
    `,
  },
  {
    version: 4,
    name: "lease epochs",
    // Every register and claim of a run counts one more epoch; a write of the
    // run carries the epoch its worker holds and is refused under another.
    // Runs of older files start at 1.
    sql: `
      ALTER TABLE rein_runs ADD COLUMN lease_epoch INTEGER NOT NULL DEFAULT 1;
    `,
  },
  {
    version: 5,
    name: "consumed keys",
    // Things that happen once across every process on the store (a paused
    // turn's continuation is resumed once): the insert is the check.
    sql: `
      CREATE TABLE rein_consumed (
        key TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        consumed_at INTEGER NOT NULL
      );
      CREATE INDEX rein_consumed_by_session ON rein_consumed (session_id);
    `,
  },
];

/** Highest schema version this build reads and writes. @internal */
export const SESSION_SCHEMA_VERSION = SESSION_MIGRATIONS[SESSION_MIGRATIONS.length - 1]!.version;

/** `PRAGMA application_id` of a Rein session store ("Rein" in ASCII). @internal */
export const REIN_APPLICATION_ID = 0x5265696e;
