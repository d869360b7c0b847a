/**
 * The worker thread of {@link PostgresSessionStore}: it owns the store's one
 * `pg` Client and answers the store's requests. The thread's own event loop
 * stays free for pg's socket I/O while the store's thread waits for a reply
 * with `Atomics.wait` (see `postgres-connection.ts`).
 *
 * The protocol is `SyncWorkerBridge`'s (`@rein/session`): this is its
 * worker end. Requests arrive on `port` and run one at a time, in order (one
 * connection: a transaction must never interleave with another request). A
 * synchronous request (`id` 0) is answered on `port`, and then the reply
 * counter in the shared `signal` is bumped and notified; any other is
 * answered on `asyncPort`.
 *
 * {@link postgresWorker} is started from its source text
 * (`Function.prototype.toString`), so it must not use anything from the
 * module scope: every import comes through `load`, and types only.
 * @internal
 */

import type { MessagePort } from "node:worker_threads";
import type { ClientConfig } from "pg";

/** What the worker is started with. @internal */
export interface PostgresWorkerData {
  /** Where `pg` is, resolved by the store's package. */
  readonly pgPath: string;
  /** Connection settings: structured-cloneable values only. */
  readonly config: ClientConfig;
  /** The schema, already quoted as an identifier. */
  readonly schema: string;
  /** The schema name as given (the key of the migration lock). */
  readonly schemaName: string;
  /** `lock_timeout` of every statement, in ms. */
  readonly busyTimeoutMs: number;
  /** Ordered migrations; `{schema}` in their SQL stands for {@link schema}. */
  readonly migrations: readonly { version: number; name: string; sql: string }[];
  /** This store instance's id, recorded on the nodes it appends. */
  readonly owner: string;
  readonly port: MessagePort;
  readonly asyncPort: MessagePort;
  readonly signal: SharedArrayBuffer;
}

/**
 * What {@link postgresWorker} is run with in the store's own thread, for the
 * asynchronous path: a bounded `pg.Pool` instead of the ports. Only
 * transactions (`commit`) go through the pool; the returned operations are
 * awaited directly.
 * @internal
 */
export interface PostgresPoolData extends Omit<PostgresWorkerData, "port" | "asyncPort" | "signal"> {
  readonly pool: import("pg").Pool;
}

/** A request: `id` 0 is answered on the synchronous port, any other on the async one. @internal */
export interface PostgresRequest {
  readonly id: number;
  readonly op: string;
  readonly args: readonly unknown[];
}

/**
 * A failure as the worker reports it: `kind` names a Rein fault, or is
 * `"pg"` for an error of the driver or the server (`code`: its SQLSTATE or
 * the socket's errno code).
 * @internal
 */
export interface PostgresFailure {
  readonly kind: string;
  readonly message: string;
  readonly code?: string;
  readonly data?: unknown;
}

/** A reply to a {@link PostgresRequest}. @internal */
export interface PostgresReply {
  readonly id: number;
  readonly value?: unknown;
  readonly failure?: PostgresFailure;
}

/**
 * The worker: connects on `open`, migrates the schema, and answers every
 * store operation. Self-contained: see the file comment.
 * @internal
 */
export function postgresWorker(
  load: (id: string) => unknown,
  data: PostgresWorkerData | PostgresPoolData,
): Record<string, (...args: never[]) => Promise<unknown>> | undefined {
  const pg = load(data.pgPath) as typeof import("pg");
  // Pool mode (in the store's thread): transactions take a pooled client each; nothing is served on ports.
  const pool = "pool" in data ? data.pool : undefined;
  // The WORKER_SIGNAL slots of @rein/session's SyncWorkerBridge, repeated: this function sees nothing of its module.
  const REPLIES = 1;
  const ENDED = 2;
  const S = data.schema;
  type Row = unknown[];
  type Client = import("pg").Client;

  class Fault extends Error {
    constructor(
      readonly kind: string,
      message: string,
      readonly data?: unknown,
    ) {
      super(message);
    }
  }

  let client: Client | undefined;
  let closed = false;
  /**
   * Whether the current connection holds this store's liveness lock: a
   * session-level advisory lock on the owner id, which the server releases
   * when the connection ends (the process died, the machine or the network
   * went). Another store that can take it knows this one is gone.
   */
  let ownerLockHeld = false;
  /** The advisory lock key of a store owner id (`$1`), in the one-bigint key space. */
  const OWNER_KEY = "hashtextextended('rein-session-store-owner:' || $1::text, 0)";

  /** Forgets a client whose connection failed; the next request connects anew. */
  function drop(failed: Client): void {
    // A pooled client is released with the error by its transaction, and the pool ends it.
    if (pool !== undefined) return;
    if (client === failed) {
      client = undefined;
      ownerLockHeld = false;
    }
    failed.removeAllListeners("error");
    failed.on("error", () => undefined);
    void failed.end().catch(() => undefined);
  }

  async function connection(): Promise<Client> {
    if (closed) throw new Fault("closed", "closed");
    if (client !== undefined) {
      // The lock was not free when this connection was made (the backend of
      // the lost one had not ended yet, or a recovering store held it for a
      // moment): take it as soon as it is.
      if (!ownerLockHeld) {
        const current = client;
        const [taken] = (await query(current, `SELECT pg_try_advisory_lock(${OWNER_KEY})`, [data.owner])).rows;
        ownerLockHeld = client === current && taken![0] === true;
      }
      return client;
    }
    const fresh = new pg.Client(data.config);
    // An idle connection the server ended (restart, pg_terminate_backend)
    // reports here: forget it, so the next request connects again.
    fresh.on("error", () => drop(fresh));
    try {
      await fresh.connect();
      // Every query of the store follows keys through indexes. The planner
      // cannot estimate a recursive walk (readAncestry, listBranches) and
      // hashes the whole session for it: 80 ms instead of 1 ms at 100k nodes.
      await fresh.query(`SET lock_timeout = ${Math.max(1, Math.round(data.busyTimeoutMs))}; SET enable_hashjoin = off; SET enable_mergejoin = off`);
    } catch (error) {
      drop(fresh);
      throw error;
    }
    client = fresh;
    ownerLockHeld = await takeOwnerLock(fresh);
    return fresh;
  }

  /**
   * Takes this store's liveness lock on a new connection, waiting up to
   * lock_timeout: after a lost connection the old backend may still hold it
   * until the server notices, and a store recovering nodes holds it for a
   * moment. Not had in time: false, and the next request tries again.
   */
  async function takeOwnerLock(c: Client): Promise<boolean> {
    try {
      await query(c, `SELECT pg_advisory_lock(${OWNER_KEY})`, [data.owner]);
      return true;
    } catch (error) {
      if ((error as { code?: unknown }).code === "55P03") return false;
      drop(c);
      throw error;
    }
  }

  /** Whether an error leaves the connection unusable (the socket, not the statement, failed). */
  function connectionLost(error: unknown): boolean {
    const code = (error as { code?: unknown }).code;
    if (typeof code !== "string") return true;
    return !/^[0-9A-Z]{5}$/.test(code) || code.startsWith("08") || code.startsWith("57P");
  }

  const prepared = new Map<string, string>();

  /** Runs one statement, rows as arrays; prepared once per connection under a name of its own. */
  async function query(c: Client, text: string, values: readonly unknown[] = []): Promise<{ rows: Row[]; rowCount: number }> {
    let name = prepared.get(text);
    if (name === undefined) prepared.set(text, (name = `rein_${prepared.size}`));
    try {
      const result = await c.query({ name, text, values: values as unknown[], rowMode: "array" });
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
    } catch (error) {
      if (connectionLost(error)) drop(c);
      throw error;
    }
  }

  /** One statement on the store's connection, outside a transaction. */
  async function run(text: string, values: readonly unknown[] = []): Promise<{ rows: Row[]; rowCount: number }> {
    return query(await connection(), text, values);
  }

  /**
   * Runs `work` in a transaction, always closed before this returns:
   * committed, or rolled back (a connection that cannot even roll back is
   * dropped, and the server rolls back when its socket closes).
   */
  async function transaction<T>(work: (c: Client) => Promise<T>, isolation = ""): Promise<T> {
    if (pool !== undefined) return pooledTransaction(pool, work, isolation);
    const c = await connection();
    await query(c, `BEGIN${isolation}`);
    try {
      const result = await work(c);
      await query(c, "COMMIT");
      return result;
    } catch (error) {
      if (client === c) {
        try {
          await c.query("ROLLBACK");
        } catch {
          drop(c);
        }
      }
      throw error;
    }
  }

  /** {@link transaction} on a client of the pool, released (ended when its connection failed) before this returns. */
  async function pooledTransaction<T>(from: import("pg").Pool, work: (c: Client) => Promise<T>, isolation: string): Promise<T> {
    const c = (await from.connect()) as unknown as Client & { release(error?: Error | boolean): void };
    let unusable = false;
    try {
      await query(c, `BEGIN${isolation}`);
      const result = await work(c);
      await query(c, "COMMIT");
      return result;
    } catch (error) {
      unusable = connectionLost(error);
      if (!unusable) await c.query("ROLLBACK").catch(() => (unusable = true));
      throw error;
    } finally {
      c.release(unusable ? true : undefined);
    }
  }

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
      throw new Fault("schema-version", "newer schema", { foundVersion: version, supportedVersion: latestVersion() });
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

  /** Creates or checks the schema, then interrupts the running nodes of stores that are gone. */
  async function open(): Promise<number> {
    await migrate(await connection());
    return interruptAbandoned();
  }

  async function migrate(c: Client): Promise<void> {
    const version = await currentVersion(c);
    assertKnown(version);
    if (version === latestVersion()) return;
    // Several processes may open a fresh database at once: one migrates
    // while the others wait on the lock, then find the work done. Everything
    // is read again under the lock: read before it, another process's
    // migration could look like a foreign schema (its tables, no version yet).
    await transaction(async (locked) => {
      await query(locked, "SELECT pg_advisory_xact_lock(hashtext($1))", [`rein-session-store:${data.schemaName}`]);
      if ((await currentVersion(locked)) === 0) {
        const tables = await foreignTables(locked);
        if (tables.length > 0) throw new Fault("foreign-schema", "foreign schema", { tables });
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

  /**
   * Marks `interrupted` the running nodes of every other owner whose
   * liveness lock is free (its connection, and so its process, is gone);
   * nodes of owners still connected are left alone. The lock of a gone
   * owner is held while its nodes are marked, so two stores recovering at
   * once do not both mark, and released after.
   */
  async function interruptAbandoned(): Promise<number> {
    const c = await connection();
    const owners = (await query(c, `SELECT DISTINCT owner FROM ${S}.nodes WHERE status = 'running' AND owner IS DISTINCT FROM $1`, [data.owner])).rows;
    let interrupted = 0;
    for (const [owner] of owners) {
      if (owner === null) {
        interrupted += (await query(c, `UPDATE ${S}.nodes SET metadata = jsonb_set(metadata, '{status}', '"interrupted"') WHERE status = 'running' AND owner IS NULL`)).rowCount;
        continue;
      }
      const [taken] = (await query(c, `SELECT pg_try_advisory_lock(${OWNER_KEY})`, [owner])).rows;
      if (taken![0] !== true) continue;
      try {
        interrupted += (
          await query(c, `UPDATE ${S}.nodes SET metadata = jsonb_set(metadata, '{status}', '"interrupted"') WHERE status = 'running' AND owner = $1`, [owner])
        ).rowCount;
      } finally {
        // A lost connection released it already.
        if (client === c) await query(c, `SELECT pg_advisory_unlock(${OWNER_KEY})`, [owner]);
      }
    }
    return interrupted;
  }

  const SESSION_COLUMNS = "id, agent_id, title, created_at, updated_at, head_id, last_seq, node_count";
  const RUN_COLUMNS = "run_id, session_id, name, state, reason, owner IS NOT NULL, lease_until, updated_at, created_at, lease_epoch";

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

  function notFound(sessionId: string): Fault {
    return new Fault("session-not-found", "no session", { sessionId });
  }

  async function sessionRow(id: string): Promise<Row> {
    const [found] = (await run(`SELECT ${SESSION_COLUMNS} FROM ${S}.sessions WHERE id = $1`, [id])).rows;
    if (found === undefined) throw notFound(id);
    return found;
  }

  /** Nodes read per page by `readNodes`. */
  const PAGE = 20_000;

  /**
   * Applies a commit in one transaction (see `PostgresSessionStore.commit`
   * for the rules). Appends are `["a", id, seq, createdAt, role, name,
   * input, output, caller, predecessor, metadata]`, updates `["u", id, name
   * | null, hasInput, input, hasOutput, output, metadataSet | null,
   * metadataRemove | null]`; values as JSON text. With `reportStored`, a
   * node found already stored is reported with its stored `seq` (a retry
   * of a commit whose reply was lost). `fences` (`[runId, epoch]` pairs):
   * the runs' rows are read `FOR SHARE`, so no claim moves an epoch before
   * this transaction ends, and a run at another epoch refuses the commit.
   */
  async function commit(sessionId: string, operations: readonly Row[], reportStored: boolean, fences: readonly (readonly [string, number])[] | null = null): Promise<[string, number][]> {
    return transaction(async (c) => {
      if (fences !== null) await checkFences(c, fences);
      const ids = [...new Set(operations.map((operation) => operation[1] as string))];
      // The session row's lock orders the commits of every writer in every
      // process; last_seq is read under it, so seq never repeats.
      const [session] = (
        await query(
          c,
          `SELECT s.head_id, s.last_seq, (SELECT coalesce(json_agg(json_build_array(n.id, n.seq, n.created_at, n.role, n.name, n.caller, n.predecessor)), '[]')::text ` +
            `FROM ${S}.nodes n WHERE n.session_id = $1 AND n.id = ANY($2::text[])) FROM ${S}.sessions s WHERE s.id = $1 FOR UPDATE OF s`,
          [sessionId, ids],
        )
      ).rows;
      if (session === undefined) throw notFound(sessionId);
      let headId = session[0] as string | null;
      let lastSeq = Number(session[1]);
      const stored = new Map<string, Row>();
      for (const found of JSON.parse(session[2] as string) as Row[]) stored.set(found[0] as string, found);
      const appended = new Map<string, unknown[]>();
      const updates = new Map<string, { name: string | null; hasInput: boolean; input: unknown; hasOutput: boolean; output: unknown; set: Record<string, unknown>; remove: Set<string> }>();
      const seqs: [string, number][] = [];
      for (const operation of operations) {
        const id = operation[1] as string;
        if (operation[0] === "a") {
          const earlier = stored.get(id);
          const prior = earlier ?? appended.get(id);
          if (prior !== undefined) {
            // [id, seq, createdAt, role, name, caller, predecessor] against the append's fields.
            const previous = earlier !== undefined ? prior : [prior[0], prior[1], prior[2], prior[3], prior[4], prior[7], prior[8]];
            const same =
              Number(previous[2]) === operation[3] &&
              previous[3] === operation[4] &&
              previous[4] === operation[5] &&
              previous[5] === operation[8] &&
              previous[6] === operation[9];
            if (!same) throw new Fault("node-conflict", "id taken", { sessionId, nodeId: id });
            if (reportStored && earlier !== undefined) seqs.push([id, Number(earlier[1])]);
            continue;
          }
          const proposed = operation[2] as number;
          const seq = proposed > lastSeq ? proposed : lastSeq + 1;
          lastSeq = seq;
          // [id, seq, createdAt, role, name, input, output, caller, predecessor, metadata]
          appended.set(id, [id, seq, operation[3], operation[4], operation[5], operation[6], operation[7], operation[8], operation[9], operation[10]]);
          seqs.push([id, seq]);
          if (operation[8] === null) headId = id;
          continue;
        }
        const set = operation[7] === null ? {} : (JSON.parse(operation[7] as string) as Record<string, unknown>);
        const remove = (operation[8] as string[] | null) ?? [];
        const fresh = appended.get(id);
        if (fresh !== undefined) {
          // A node appended earlier in this commit: updated before it is written.
          if (operation[2] !== null) fresh[4] = operation[2];
          if (operation[3] === true) fresh[5] = operation[4];
          if (operation[5] === true) fresh[6] = operation[6];
          const metadata = JSON.parse(fresh[9] as string) as Record<string, unknown>;
          for (const key of remove) delete metadata[key];
          Object.assign(metadata, set);
          fresh[9] = JSON.stringify(metadata);
          continue;
        }
        // An update of a node that is not stored is ignored, as by every store.
        if (!stored.has(id)) continue;
        let folded = updates.get(id);
        if (folded === undefined) updates.set(id, (folded = { name: null, hasInput: false, input: null, hasOutput: false, output: null, set: {}, remove: new Set() }));
        if (operation[2] !== null) folded.name = operation[2] as string;
        if (operation[3] === true) {
          folded.hasInput = true;
          folded.input = operation[4];
        }
        if (operation[5] === true) {
          folded.hasOutput = true;
          folded.output = operation[6];
        }
        for (const key of remove) {
          folded.remove.add(key);
          delete folded.set[key];
        }
        for (const key of Object.keys(set)) {
          folded.remove.delete(key);
          folded.set[key] = set[key];
        }
      }
      const rows = [...appended.values()];
      const column = (index: number): unknown[] => rows.map((found) => found[index]);
      const changes = [...updates];
      // One statement writes the nodes, the updates and the session. The
      // parts of one statement see the same snapshot: no update here targets
      // a node appended here (those were folded in above).
      const result = await query(
        c,
        `WITH inserted AS (INSERT INTO ${S}.nodes (session_id, id, seq, created_at, role, name, input, output, caller, predecessor, metadata, owner) ` +
          `SELECT $1, a.id, a.seq, a.created_at, a.role, a.name, a.input, a.output, a.caller, a.predecessor, a.metadata, $12 ` +
          `FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::jsonb[]) ` +
          `AS a(id, seq, created_at, role, name, input, output, caller, predecessor, metadata) RETURNING 1), ` +
          `updated AS (UPDATE ${S}.nodes n SET name = coalesce(u.name, n.name), ` +
          `input = CASE WHEN u.has_input THEN u.input ELSE n.input END, output = CASE WHEN u.has_output THEN u.output ELSE n.output END, ` +
          `metadata = (n.metadata - ARRAY(SELECT jsonb_array_elements_text(u.remove))) || u.set ` +
          `FROM unnest($13::text[], $14::text[], $15::bool[], $16::text[], $17::bool[], $18::text[], $19::jsonb[], $20::jsonb[]) ` +
          `AS u(id, name, has_input, input, has_output, output, set, remove) WHERE n.session_id = $1 AND n.id = ANY($13::text[]) AND n.id = u.id RETURNING 1) ` +
          `UPDATE ${S}.sessions SET head_id = $21, last_seq = $22, node_count = node_count + $23, updated_at = $24 WHERE id = $1`,
        [
          sessionId,
          column(0),
          column(1),
          column(2),
          column(3),
          column(4),
          column(5),
          column(6),
          column(7),
          column(8),
          column(9),
          data.owner,
          changes.map(([id]) => id),
          changes.map(([, change]) => change.name),
          changes.map(([, change]) => change.hasInput),
          changes.map(([, change]) => change.input),
          changes.map(([, change]) => change.hasOutput),
          changes.map(([, change]) => change.output),
          changes.map(([, change]) => JSON.stringify(change.set)),
          changes.map(([, change]) => JSON.stringify([...change.remove])),
          headId,
          lastSeq,
          rows.length,
          Date.now(),
        ],
      );
      if (result.rowCount !== 1) throw notFound(sessionId);
      return seqs;
    });
  }

  /** Throws the lease-lost fault unless each run's lease is at the fence's epoch; the runs' rows stay locked until the transaction ends. */
  async function checkFences(c: Client, fences: readonly (readonly [string, number])[]): Promise<void> {
    const { rows } = await query(c, `SELECT run_id, lease_epoch FROM ${S}.runs WHERE run_id = ANY($1::text[]) FOR SHARE`, [fences.map(([runId]) => runId)]);
    const current = new Map(rows.map((found) => [String(found[0]), Number(found[1])]));
    for (const [runId, epoch] of fences) {
      const now = current.get(runId) ?? null;
      if (now !== epoch) throw new Fault("lease-lost", "lease lost", { runId, heldEpoch: epoch, currentEpoch: now });
    }
  }

  const operations: Record<string, (...args: never[]) => Promise<unknown>> = {
    open,
    async createSession(id: string, agentId: string | null, title: string | null): Promise<Row> {
      const now = Date.now();
      const [created] = (
        await run(
          `INSERT INTO ${S}.sessions (id, agent_id, title, created_at, updated_at) VALUES ($1, $2, $3, $4, $4) ON CONFLICT (id) DO NOTHING RETURNING ${SESSION_COLUMNS}`,
          [id, agentId, title, now],
        )
      ).rows;
      if (created === undefined) throw new Fault("session-exists", "taken", { sessionId: id });
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
      throw new Fault("node-not-found", "no node", { sessionId, nodeId });
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
      return transaction(async (c) => {
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
    commit,
    interruptAbandoned,
    /** The insert is the check: of several processes consuming one key, the primary key lets exactly one in. */
    async consumeOnce(sessionId: string, key: string, now: number): Promise<boolean> {
      if (!(await run(`SELECT 1 FROM ${S}.sessions WHERE id = $1`, [sessionId])).rows.length) throw notFound(sessionId);
      const inserted = await run(
        `INSERT INTO ${S}.consumed (key, session_id, consumed_at) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING`,
        [key, sessionId, now],
      );
      return inserted.rowCount === 1;
    },
    async registerRun(runId: string, sessionId: string, name: string, leaseMs: number, now: number): Promise<void> {
      const inserted = await run(
        `INSERT INTO ${S}.runs (run_id, session_id, name, state, owner, lease_until, created_at, updated_at) ` +
          `SELECT $1, $2, $3, 'running', $4, $5, $6, $6 WHERE EXISTS (SELECT 1 FROM ${S}.sessions WHERE id = $2)`,
        [runId, sessionId, name, data.owner, now + leaseMs, now],
      );
      if (inserted.rowCount === 0) throw notFound(sessionId);
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
      const release = (c: Client): Promise<unknown> =>
        query(c, `UPDATE ${S}.runs SET state = $2, reason = $3, owner = NULL, lease_until = NULL, updated_at = $4 WHERE run_id = $1 AND owner = $5`, [
          runId,
          state,
          reason,
          now,
          data.owner,
        ]);
      if (epoch === null) {
        await release(await connection());
        return;
      }
      await transaction(async (c) => {
        await checkFences(c, [[runId, epoch]]);
        await release(c);
      });
    },
    async getRun(runId: string): Promise<Row | undefined> {
      return (await run(`SELECT ${RUN_COLUMNS} FROM ${S}.runs WHERE run_id = $1`, [runId])).rows[0];
    },
    async listRuns(states: readonly string[] | null): Promise<Row[]> {
      return (await run(`SELECT ${RUN_COLUMNS} FROM ${S}.runs WHERE $1::text[] IS NULL OR state = ANY($1::text[]) ORDER BY created_at, run_id`, [states])).rows;
    },
    async interruptRunning(): Promise<number> {
      return (
        await run(
          `UPDATE ${S}.nodes SET metadata = jsonb_set(metadata, '{status}', '"interrupted"') WHERE status = 'running' AND owner = $1`,
          [data.owner],
        )
      ).rowCount;
    },
    async close(): Promise<void> {
      closed = true;
      const open = client;
      client = undefined;
      if (open !== undefined) {
        open.removeAllListeners("error");
        open.on("error", () => undefined);
        await open.end().catch(() => undefined);
      }
    },
  };

  function failureOf(error: unknown): PostgresFailure {
    if (error instanceof Fault) return { kind: error.kind, message: error.message, data: error.data };
    const { message, code } = error as { message?: unknown; code?: unknown };
    return {
      kind: "pg",
      message: typeof message === "string" ? message : String(error),
      ...(typeof code === "string" ? { code } : {}),
    };
  }

  async function serve(request: PostgresRequest): Promise<void> {
    let answer: PostgresReply;
    try {
      const operation = operations[request.op];
      if (operation === undefined) throw new Fault("internal", `unknown operation ${request.op}`);
      answer = { id: request.id, value: await operation(...(request.args as never[])) };
    } catch (error) {
      answer = { id: request.id, failure: failureOf(error) };
    }
    const ports = data as PostgresWorkerData;
    const signal = new Int32Array(ports.signal);
    if (request.id === 0) {
      ports.port.postMessage(answer);
      Atomics.add(signal, REPLIES, 1);
      Atomics.notify(signal, REPLIES);
    } else {
      ports.asyncPort.postMessage(answer);
    }
    if (request.op === "close") {
      Atomics.store(signal, ENDED, 1);
      Atomics.notify(signal, REPLIES);
      ports.port.close();
      ports.asyncPort.close();
    }
  }

  if (pool !== undefined) return operations;
  const ports = data as PostgresWorkerData;
  let queue: Promise<void> = Promise.resolve();
  ports.port.on("message", (request: PostgresRequest) => {
    queue = queue.then(() => serve(request));
  });
  return undefined;
}
