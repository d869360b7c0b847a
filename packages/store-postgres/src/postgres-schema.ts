/**
 * The schema of a Postgres session store, as ordered migrations applied
 * inside the store's schema (`{schema}` stands for it). Applied versions are
 * recorded in `<schema>.rein_schema`; a schema whose highest version is
 * above {@link POSTGRES_SCHEMA_VERSION} was written by a newer
 * `@rein/store-postgres` and is refused untouched.
 * @internal
 */
export const POSTGRES_MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: "sessions and nodes",
    sql: `
      CREATE TABLE {schema}.sessions (
        id text PRIMARY KEY,
        agent_id text,
        title text,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        head_id text,
        last_seq bigint NOT NULL DEFAULT -1,
        node_count bigint NOT NULL DEFAULT 0
      );
      CREATE TABLE {schema}.nodes (
        session_id text NOT NULL REFERENCES {schema}.sessions (id) ON DELETE CASCADE,
        id text NOT NULL,
        seq bigint NOT NULL,
        created_at bigint NOT NULL,
        role text NOT NULL,
        name text NOT NULL,
        input text,
        output text,
        caller text,
        predecessor text,
        metadata jsonb NOT NULL,
        status text GENERATED ALWAYS AS (CASE WHEN jsonb_typeof(metadata -> 'status') = 'string' THEN metadata ->> 'status' END) STORED,
        owner text,
        PRIMARY KEY (session_id, id),
        UNIQUE (session_id, seq)
      );
      CREATE INDEX nodes_by_caller ON {schema}.nodes (session_id, caller);
      CREATE INDEX nodes_by_predecessor ON {schema}.nodes (session_id, predecessor);
      CREATE INDEX nodes_running ON {schema}.nodes (owner) WHERE status = 'running';
    `,
  },
  {
    version: 2,
    name: "resumable runs and their leases",
    // One row per resumable run: its state and the lease of the store that
    // owns it (owner null when nobody does). Older schemas gain the table empty.
    sql: `
      CREATE TABLE {schema}.runs (
        run_id text PRIMARY KEY,
        session_id text NOT NULL REFERENCES {schema}.sessions (id) ON DELETE CASCADE,
        name text NOT NULL,
        state text NOT NULL,
        reason text,
        owner text,
        lease_until bigint,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL
      );
      CREATE INDEX runs_by_state ON {schema}.runs (state, created_at);
      CREATE INDEX runs_by_session ON {schema}.runs (session_id);
    `,
  },
  {
    version: 3,
    name: "lease epochs",
    // Every register and claim of a run counts one more epoch; a write of the
    // run carries the epoch its worker holds and is refused under another.
    // Runs of older schemas start at 1.
    sql: `
      ALTER TABLE {schema}.runs ADD COLUMN lease_epoch bigint NOT NULL DEFAULT 1;
    `,
  },
  {
    version: 4,
    name: "consumed keys",
    // Things that happen once across every process on the database (a paused
    // turn's continuation is resumed once): the insert is the check.
    sql: `
      CREATE TABLE {schema}.consumed (
        key text PRIMARY KEY,
        session_id text NOT NULL REFERENCES {schema}.sessions (id) ON DELETE CASCADE,
        consumed_at bigint NOT NULL
      );
      CREATE INDEX consumed_by_session ON {schema}.consumed (session_id);
    `,
  },
];

/** Highest schema version this build reads and writes. @internal */
export const POSTGRES_SCHEMA_VERSION = POSTGRES_MIGRATIONS[POSTGRES_MIGRATIONS.length - 1]!.version;
