/**
 * The schema side of the Postgres store's worker: reads the schema's
 * version, refuses a newer one or a schema with tables Rein did not make,
 * and applies the missing migrations under an advisory lock. Runs through
 * the worker's connection (`postgres-worker-database.ts`).
 *
 * Started from its source text like the rest of the worker
 * (`postgres-worker.ts`): it uses nothing from the module scope, and
 * imports types only.
 * @internal
 */

import type { PostgresWorkerClient, PostgresWorkerDatabase } from "./postgres-worker-database";
import type { PostgresPoolData, PostgresWorkerData } from "./postgres-worker-protocol";

/** What {@link postgresWorkerMigrations} gives the worker. @internal */
export interface PostgresWorkerMigrations {
  /** Creates or checks the schema on the store's connection. */
  migrate(): Promise<void>;
}

/**
 * The schema's migrations. Self-contained: see the file comment.
 * @internal
 */
export function postgresWorkerMigrations(db: PostgresWorkerDatabase, data: PostgresWorkerData | PostgresPoolData): PostgresWorkerMigrations {
  type Client = PostgresWorkerClient;
  const { query } = db;
  const S = data.schema;

  function latestVersion(): number {
    return data.migrations[data.migrations.length - 1]!.version;
  }

  async function currentVersion(c: Client): Promise<number> {
    // Read from pg_class with the statement's snapshot, not through to_regclass: its lookup takes no lock, so
    // a process that looked before another one's migration committed (and then waited for the migration lock)
    // kept its cached "no such table" and took the fresh tables for a foreign schema.
    const [found] = (
      await query(
        c,
        "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class r JOIN pg_catalog.pg_namespace n ON n.oid = r.relnamespace WHERE n.nspname = $1 AND r.relname = 'rein_schema')",
        [data.schemaName],
      )
    ).rows;
    if (found![0] !== true) return 0;
    const [version] = (await query(c, `SELECT coalesce(max(version), 0) FROM ${S}.rein_schema`)).rows;
    return Number(version![0]);
  }

  function assertKnown(version: number): void {
    if (version > latestVersion()) {
      throw db.fault("schema-version", "newer schema", { foundVersion: version, supportedVersion: latestVersion() });
    }
  }

  /** Tables of the schema when it holds some but is not Rein's (no `rein_schema`). */
  async function foreignTables(c: Client): Promise<string[]> {
    const { rows } = await query(
      c,
      "SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1 AND table_name IN ('sessions', 'nodes') ORDER BY 1",
      [data.schemaName],
    );
    return rows.map((found) => String(found[0]));
  }

  async function migrate(): Promise<void> {
    const version = await currentVersion(await db.connection());
    assertKnown(version);
    if (version === latestVersion()) return;
    // Several processes may open a fresh database at once: one migrates
    // while the others wait on the lock, then find the work done. Everything
    // is read again under the lock: read before it, another process's
    // migration could look like a foreign schema (its tables, no version yet).
    await db.transaction(async (locked) => {
      await query(locked, "SELECT pg_advisory_xact_lock(hashtext($1))", [`rein-session-store:${data.schemaName}`]);
      if ((await currentVersion(locked)) === 0) {
        const tables = await foreignTables(locked);
        if (tables.length > 0) throw db.fault("foreign-schema", "foreign schema", { tables });
      }
      await locked.query(`CREATE SCHEMA IF NOT EXISTS ${S}`);
      await locked.query(
        `CREATE TABLE IF NOT EXISTS ${S}.rein_schema (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`,
      );
      const current = await currentVersion(locked);
      assertKnown(current);
      for (const migration of data.migrations) {
        if (migration.version <= current) continue;
        await locked.query(migration.sql.split("{schema}").join(S));
        await query(locked, `INSERT INTO ${S}.rein_schema (version, name, applied_at) VALUES ($1, $2, $3)`, [
          migration.version,
          migration.name,
          Date.now(),
        ]);
      }
    });
  }

  return { migrate };
}
