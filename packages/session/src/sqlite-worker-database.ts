/**
 * The connection side of the SQLite store's worker thread: opens the one
 * `libsql` connection (checks, migrations, crash recovery), caches prepared
 * statements, runs every write in a `BEGIN IMMEDIATE` transaction, reads
 * the WAL stamp, checkpoints when idle and closes. The session and run
 * queries (`sqlite-session-queries.ts`, `sqlite-run-queries.ts`) run
 * through it.
 *
 * Started from its source text like the rest of the worker
 * (`sqlite-session-worker.ts`): it uses nothing from the module scope, and
 * imports types only.
 * @internal
 */

import type { SqliteFailure, SqliteWorkerData } from "./sqlite-worker-protocol";

/** A row as the worker reads it: raw column values. @internal */
export type SqliteWorkerRow = unknown[];

/** A fault the worker reports by `kind` (see {@link SqliteFailure}). @internal */
export interface SqliteWorkerFault extends Error {
  readonly kind: string;
  readonly data?: unknown;
}

/** What {@link sqliteWorkerDatabase} gives the queries and the worker's loop. @internal */
export interface SqliteWorkerDatabase {
  /** A fault with this `kind`, to throw. */
  fault(kind: string, message: string, data?: unknown): SqliteWorkerFault;
  rows(sql: string, ...params: unknown[]): SqliteWorkerRow[];
  row(sql: string, ...params: unknown[]): SqliteWorkerRow | undefined;
  /** Runs a statement; returns the number of rows it changed. */
  run(sql: string, ...params: unknown[]): number;
  /** Runs `work` holding the write lock, in one transaction. */
  write<T>(work: () => T): T;
  /** The WAL-index header as text (latin1), or null when it cannot be read; also left in {@link header}. */
  walStamp(): string | null;
  /** The buffer {@link walStamp} reads into. */
  readonly header: Buffer;
  /** Whether a process of this host is alive. */
  isAlive(pid: number): boolean;
  /** Opens the connection: see `open` in the file. */
  open(): void;
  /** Closes the connection, checkpointing the WAL first unless told not to. */
  close(checkpoint?: boolean): void;
  /** The report of a failure; forgets the prepared statements. */
  failed(error: unknown): SqliteFailure;
  /** Background work when no request waits: the WAL checkpoint. */
  idle(): void;
}

/**
 * The worker's connection to the database (not opened until `open`).
 * Self-contained: see the file comment.
 * @internal
 */
export function sqliteWorkerDatabase(load: (id: string) => unknown, data: SqliteWorkerData): SqliteWorkerDatabase {
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

  /** Runs `work` again while it fails SQLITE_BUSY, sleeping 1, 2, 4 … 20 ms, up to the open's timeout. */
  function whileBusy<T>(work: () => T): T {
    const deadline = Date.now() + data.openTimeoutMs;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (let attempt = 0; ; attempt++) {
      try {
        return work();
      } catch (error) {
        if ((error as { code?: unknown }).code !== "SQLITE_BUSY" || Date.now() >= deadline) throw error;
        Atomics.wait(pause, 0, 0, Math.min(20, 2 ** attempt, Math.max(1, deadline - Date.now())));
      }
    }
  }

  function open(): void {
    // Opening waits for another connection's lock up to the store's busyTimeoutMs; every later call makes one short attempt.
    // (SQLite's busy timeout is a 32-bit int: a larger value would wrap to no wait at all.)
    db = new Database(data.location, { timeout: Math.min(data.openTimeoutMs, 2_147_483_647) });
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
    // SQLite answers a journal-mode change busy at once, without its busy handler: wait here instead, as long as
    // the open may (another process creating the schema of a new file holds the lock for a moment).
    if (!inMemory && String(row("PRAGMA journal_mode")![0]).toLowerCase() !== "wal") whileBusy(() => row("PRAGMA journal_mode = WAL"));
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
    db.exec(`PRAGMA busy_timeout = ${data.attemptTimeoutMs}`);
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

  function close(checkpoint = true): void {
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
  }

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
    fault: (kind: string, message: string, faultData?: unknown): SqliteWorkerFault => new Fault(kind, message, faultData),
    rows,
    row,
    run,
    write,
    walStamp,
    header,
    isAlive,
    open,
    close,
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
