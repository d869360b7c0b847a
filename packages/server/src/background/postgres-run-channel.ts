import type { Client, Notification, Pool } from "pg";
import type { RunChannel, RunControl, StoredRunEvent } from "./run-channel";
import { createRunChannelTables } from "./run-channel-tables";
import { EVENTS_PER_INSERT, storedJson } from "./stored-json";

/**
 * Options of {@link PostgresRunChannel}.
 * @example
 * ```ts
 * new PostgresRunChannel({ connectionString: url, schema: "rein_queue", maxConnections: 4 });
 * ```
 */
export interface PostgresRunChannelOptions {
  /** The database (the queue's and the session store's). */
  readonly connectionString: string;
  /** The schema its two tables (`rein_run_events`, `rein_run_controls`) live in: the queue's. @default "rein_queue" */
  readonly schema?: string;
  /** The pool's connections, beside the one that listens. @default 4 */
  readonly maxConnections?: number;
  /** Receives a lost listening connection (it is opened again). @default one line on stderr */
  readonly onError?: (error: unknown) => void;
  /** Awaited before the tables are first created (the queue creates the schema first: `PgBossQueue`). */
  readonly before?: () => Promise<unknown>;
  /**
   * How long a run's events and control requests are kept, in ms: older rows
   * are deleted once the channel is opened and then every hour (or every
   * quarter of this, when shorter) by each process, and by {@link PostgresRunChannel.prune}.
   * A replay of a run older than this starts at its first kept event.
   * @default 604_800_000 (7 days)
   */
  readonly retentionMs?: number;
}

/** The default {@link PostgresRunChannelOptions.retentionMs}: 7 days. */
export const DEFAULT_RUN_EVENT_RETENTION_MS = 7 * 24 * 3_600_000;

const SCHEMA = /^[a-z_][a-z0-9_]{0,40}$/;
const CONTROL_ACTIONS: readonly string[] = ["cancel", "approve", "deny"];
/** The `application_name` of the connection that listens. @internal */
export const LISTENER_NAME = "rein run channel listener";

/** What a control request is about: the run's cancel, or one tool call's answer (each given once). */
function subjectOf(request: RunControl): string {
  return request.action === "cancel" ? "cancel" : `call:${request.toolCallId ?? ""}`;
}

/**
 * The {@link RunChannel} on Postgres: a run's events are rows of
 * `rein_run_events` (run id, seq, JSON), written by the worker executing it
 * and read by any instance; `NOTIFY` on the schema's events channel wakes
 * the instances following the run. A control request is a row of
 * `rein_run_controls` (so a worker that starts the run later still sees it)
 * and a `NOTIFY` on the schema's control channel, which the worker
 * executing the run hears on its listening connection. One pool (bounded,
 * {@link PostgresRunChannelOptions.maxConnections}) and one listening
 * connection per process, opened on first use.
 * @example
 * ```ts
 * const channel = new PostgresRunChannel({ connectionString: url });
 * await channel.append(runId, [{ type: "run-start", model: "m" }]);
 * console.log(await channel.read(runId, 0));
 * ```
 */
export class PostgresRunChannel implements RunChannel {
  private readonly options: PostgresRunChannelOptions;
  private readonly schema: string;
  private readonly eventsChannel: string;
  private readonly controlChannel: string;
  private readonly queuedChannel: string;
  private readonly queuedHandlers = new Set<() => void>();
  private pool: Pool | undefined;
  private ready: Promise<Pool> | undefined;
  private listener: Promise<Client> | undefined;
  /** When (the database's clock, as text) the current listening connection began to listen. */
  private listeningSince: string | undefined;
  private readonly followers = new Map<string, Set<() => void>>();
  private readonly controlHandlers = new Set<(request: RunControl) => void>();
  /** The next seq of each run this process appends to, and the chain its appends go through in order. */
  private readonly writing = new Map<string, { next: number | undefined; chain: Promise<void> }>();
  private closed = false;
  private readonly retentionMs: number;
  /** The last prune asked for: the next waits for it. */
  private pruned: Promise<number> = Promise.resolve(0);
  /** The timer that prunes old rows while the channel is open. */
  private pruning: ReturnType<typeof setInterval> | undefined;

  constructor(options: PostgresRunChannelOptions) {
    if (typeof options !== "object" || options === null || typeof options.connectionString !== "string" || options.connectionString === "") {
      throw new TypeError("new PostgresRunChannel(options): options.connectionString must be a postgres:// URL");
    }
    const schema = options.schema ?? "rein_queue";
    if (!SCHEMA.test(schema)) throw new TypeError(`new PostgresRunChannel(options): schema must be a lower-case SQL name of at most 41 characters, got '${String(schema).slice(0, 64)}'`);
    const retention = options.retentionMs ?? DEFAULT_RUN_EVENT_RETENTION_MS;
    if (!Number.isSafeInteger(retention) || retention < 1) {
      throw new TypeError(`new PostgresRunChannel(options): retentionMs must be a positive integer of milliseconds (for example 604800000 for 7 days), got ${String(retention)}`);
    }
    this.retentionMs = retention;
    const max = options.maxConnections ?? 4;
    if (!Number.isInteger(max) || max < 1) throw new TypeError(`new PostgresRunChannel(options): maxConnections must be a positive integer, got ${String(max)}`);
    this.options = options;
    this.schema = schema;
    this.eventsChannel = `${schema}_run_events`;
    this.controlChannel = `${schema}_run_controls`;
    this.queuedChannel = `${schema}_run_queued`;
  }

  /** The pool, with the tables created once (idempotent: many processes may start at once). */
  private start(): Promise<Pool> {
    if (this.closed) return Promise.reject(new Error("PostgresRunChannel is closed"));
    this.ready ??= (async () => {
      await this.options.before?.();
      const { Pool: PoolClass } = require("pg") as typeof import("pg");
      const pool = new PoolClass({ connectionString: this.options.connectionString, max: this.options.maxConnections ?? 4 });
      pool.on("error", (error) => this.report(error));
      this.pool = pool;
      // Two processes creating the same tables at once collide in the catalogue: one creates, under a lock;
      // pg-boss creating the same schema meanwhile is a duplicate key: created by then, so once more.
      for (let attempt = 1; ; attempt++) {
        try {
          await createRunChannelTables(pool, this.schema);
          this.startPruning();
          return pool;
        } catch (error) {
          const code = (error as { code?: unknown }).code;
          if (attempt >= 3 || (code !== "23505" && code !== "42P06" && code !== "42P07")) throw error;
        }
      }
    })();
    this.ready.catch(() => (this.ready = undefined));
    return this.ready;
  }

  private report(error: unknown): void {
    (this.options.onError ?? ((e: unknown) => process.stderr.write(`rein run channel: ${e instanceof Error ? e.message : String(e)}\n`)))(error);
  }

  /** The listening connection, opened on first follow or control handler; opened again (every follower woken) when lost. */
  private listen(): void {
    if (this.listener !== undefined || this.closed) return;
    const opened = (async () => {
      await this.start();
      const { Client: ClientClass } = require("pg") as typeof import("pg");
      // Named, so an operator sees it in pg_stat_activity.
      const client = new ClientClass({ connectionString: this.options.connectionString, application_name: LISTENER_NAME });
      client.on("notification", (message) => this.dispatch(message));
      client.on("error", (error) => {
        this.report(error);
        void client.end().catch(() => undefined);
        if (this.listener === opened) this.listener = undefined;
        if (this.closed) return;
        // Notifications may have been missed while it was down: every follower reads again.
        setTimeout(() => {
          if (this.followers.size > 0 || this.controlHandlers.size > 0 || this.queuedHandlers.size > 0) this.listen();
          this.wakeAll();
        }, 500).unref();
      });
      try {
        await client.connect();
        await client.query(`LISTEN "${this.eventsChannel}"`);
        await client.query(`LISTEN "${this.controlChannel}"`);
        await client.query(`LISTEN "${this.queuedChannel}"`);
        // Anything appended between a follower's first read and this LISTEN: read again.
        this.wakeAll();
        // Listening again after a lost connection: the control requests recorded since the lost one began to listen
        // reach the handlers now (a cancel or an answer sent meanwhile was recorded, its NOTIFY missed); handlers
        // take a request twice as once. Idle workers ask for queued runs at once. The time moves on only once the
        // replay is done: a replay that fails is made again from the same time by the next attempt.
        const since = ((await client.query<{ now: string }>("SELECT now()::text AS now")).rows[0]!).now;
        if (this.listeningSince !== undefined) {
          await this.replayControls(this.listeningSince);
          for (const handler of this.queuedHandlers) handler();
        }
        this.listeningSince = since;
        return client;
      } catch (error) {
        // A connection that did not become the listener is ended: it would go on hearing every NOTIFY.
        client.removeAllListeners("notification");
        await client.end().catch(() => undefined);
        throw error;
      }
    })();
    this.listener = opened;
    opened.catch((error: unknown) => {
      if (this.listener === opened) this.listener = undefined;
      if (this.closed) return;
      this.report(error);
      setTimeout(() => this.listen(), 1000).unref();
    });
  }

  /** Gives the control handlers every request recorded since `since` (the database's clock), in the order recorded. */
  private async replayControls(since: string): Promise<void> {
    if (this.controlHandlers.size === 0) return;
    const pool = await this.start();
    const found = await pool.query<{ run_id: string; action: string; tool_call_id: string | null }>(
      `SELECT run_id, action, tool_call_id FROM "${this.schema}".rein_run_controls WHERE created_at >= $1::timestamptz ORDER BY created_at`,
      [since],
    );
    for (const row of found.rows) {
      if (!CONTROL_ACTIONS.includes(row.action)) continue;
      const request: RunControl = { runId: row.run_id, action: row.action as RunControl["action"], ...(row.tool_call_id === null ? {} : { toolCallId: row.tool_call_id }) };
      for (const handler of this.controlHandlers) handler(request);
    }
  }

  private wakeAll(): void {
    for (const set of this.followers.values()) for (const wake of set) wake();
  }

  private dispatch(message: Notification): void {
    const payload = message.payload ?? "";
    if (message.channel === this.eventsChannel) {
      for (const wake of this.followers.get(payload) ?? []) wake();
      return;
    }
    if (message.channel === this.queuedChannel) {
      for (const handler of this.queuedHandlers) handler();
      return;
    }
    if (message.channel === this.controlChannel) {
      let request: RunControl;
      try {
        const parsed = JSON.parse(payload) as { runId?: unknown; action?: unknown; toolCallId?: unknown };
        if (typeof parsed.runId !== "string" || typeof parsed.action !== "string" || !CONTROL_ACTIONS.includes(parsed.action)) return;
        request = { runId: parsed.runId, action: parsed.action as RunControl["action"], ...(typeof parsed.toolCallId === "string" ? { toolCallId: parsed.toolCallId } : {}) };
      } catch {
        return;
      }
      for (const handler of this.controlHandlers) handler(request);
    }
  }

  /** {@inheritDoc RunChannel.append} */
  append(runId: string, events: readonly StoredRunEvent["event"][]): Promise<void> {
    if (events.length === 0) return Promise.resolve();
    const state = this.writing.get(runId) ?? { next: undefined, chain: Promise.resolve() };
    this.writing.set(runId, state);
    const write = async () => {
      const pool = await this.start();
      const s = `"${this.schema}"`;
      if (state.next === undefined) {
        // A retried run's log goes on after the events its earlier attempts recorded.
        const found = await pool.query<{ last: number | null }>(`SELECT max(seq) AS last FROM ${s}.rein_run_events WHERE run_id = $1`, [runId]);
        state.next = (found.rows[0]?.last ?? 0) + 1;
      }
      const first = state.next;
      state.next += events.length;
      // One statement a chunk, the rows and the wake-up committed together (stored-json.ts: chunk size, jsonb text).
      for (let from = 0; from < events.length; from += EVENTS_PER_INSERT) {
        const values: unknown[] = [runId];
        const rows = events.slice(from, from + EVENTS_PER_INSERT).map((event, index) => {
          values.push(first + from + index, storedJson(event));
          return `($1, $${index * 2 + 2}, $${index * 2 + 3}::jsonb)`;
        });
        await pool.query(`WITH added AS (INSERT INTO ${s}.rein_run_events (run_id, seq, event) VALUES ${rows.join(", ")} RETURNING 1) SELECT pg_notify($${values.length + 1}, $1) FROM added LIMIT 1`, [...values, this.eventsChannel]);
      }
    };
    const next = state.chain.then(write);
    state.chain = next.catch(() => undefined);
    return next;
  }

  /** {@inheritDoc RunChannel.release} */
  release(runId: string): void {
    this.writing.delete(runId);
  }

  /** {@inheritDoc RunChannel.read} */
  async read(runId: string, afterSeq: number, limit = 500): Promise<StoredRunEvent[]> {
    const pool = await this.start();
    const found = await pool.query<{ seq: number; event: StoredRunEvent["event"] }>(
      `SELECT seq, event FROM "${this.schema}".rein_run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
      [runId, Math.max(0, Math.floor(afterSeq)), limit],
    );
    return found.rows.map((row) => ({ seq: row.seq, event: row.event }));
  }

  /** {@inheritDoc RunChannel.follow} */
  follow(runId: string, wake: () => void): () => void {
    let set = this.followers.get(runId);
    if (set === undefined) this.followers.set(runId, (set = new Set()));
    set.add(wake);
    this.listen();
    return () => {
      set!.delete(wake);
      if (set!.size === 0) this.followers.delete(runId);
    };
  }

  /** {@inheritDoc RunChannel.control} */
  async control(request: RunControl): Promise<boolean> {
    if (!CONTROL_ACTIONS.includes(request.action)) throw new TypeError(`PostgresRunChannel.control: unknown action '${String(request.action).slice(0, 32)}' (expected ${CONTROL_ACTIONS.join(", ")})`);
    if (request.action !== "cancel" && (typeof request.toolCallId !== "string" || request.toolCallId === "")) {
      throw new TypeError(`PostgresRunChannel.control: ${request.action} needs the toolCallId it answers`);
    }
    const pool = await this.start();
    const payload = JSON.stringify({ runId: request.runId, action: request.action, ...(request.toolCallId === undefined ? {} : { toolCallId: request.toolCallId }) });
    // Recorded and sent in one statement, only when it is the first of its subject.
    const found = await pool.query<{ sent: string }>(
      `WITH added AS (INSERT INTO "${this.schema}".rein_run_controls (run_id, subject, action, tool_call_id) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING 1)
       SELECT pg_notify($5, $6) AS sent FROM added`,
      [request.runId, subjectOf(request), request.action, request.toolCallId ?? null, this.controlChannel, payload],
    );
    return found.rows.length > 0;
  }

  /** {@inheritDoc RunChannel.controlsOf} */
  async controlsOf(runId: string): Promise<RunControl[]> {
    const pool = await this.start();
    const found = await pool.query<{ action: string; tool_call_id: string | null }>(`SELECT action, tool_call_id FROM "${this.schema}".rein_run_controls WHERE run_id = $1 ORDER BY created_at`, [runId]);
    return found.rows
      .filter((row) => CONTROL_ACTIONS.includes(row.action))
      .map((row) => ({ runId, action: row.action as RunControl["action"], ...(row.tool_call_id === null ? {} : { toolCallId: row.tool_call_id }) }));
  }

  /** {@inheritDoc RunChannel.onControl} */
  onControl(handler: (request: RunControl) => void): () => void {
    this.controlHandlers.add(handler);
    this.listen();
    return () => this.controlHandlers.delete(handler);
  }

  /**
   * Tells every instance that a run was queued: their idle workers ask for
   * it at once instead of at their next poll. @internal
   */
  async announceQueued(): Promise<void> {
    const pool = await this.start();
    await pool.query("SELECT pg_notify($1, '')", [this.queuedChannel]);
  }

  /** Calls `handler` whenever any instance queued a run; returns the function that stops it. @internal */
  onQueued(handler: () => void): () => void {
    this.queuedHandlers.add(handler);
    this.listen();
    return () => this.queuedHandlers.delete(handler);
  }

  /**
   * Resolves once this process listens (control requests and wake-ups sent
   * from now on reach it). @internal
   */
  async listening(): Promise<void> {
    this.listen();
    await this.listener;
  }

  /**
   * Deletes the events and control requests older than
   * {@link PostgresRunChannelOptions.retentionMs} (by the database's clock);
   * resolves to how many rows went. Runs by itself while the channel is
   * open; call it to prune now. Prunes of one channel run one after
   * another: a call made while the automatic one runs waits for it, so the
   * count is what this call removed.
   * @example
   * ```ts
   * const removed = await channel.prune();
   * ```
   */
  prune(): Promise<number> {
    const next = this.pruned.catch(() => 0).then(() => this.pruneNow());
    this.pruned = next;
    return next;
  }

  private async pruneNow(): Promise<number> {
    const pool = await this.start();
    const s = `"${this.schema}"`;
    let removed = 0;
    for (const table of ["rein_run_events", "rein_run_controls"]) {
      const result = await pool.query(`DELETE FROM ${s}.${table} WHERE created_at < now() - $1 * interval '1 millisecond'`, [this.retentionMs]);
      removed += result.rowCount ?? 0;
    }
    return removed;
  }

  /** Prunes now and then every hour (or a quarter of the retention, when shorter), never keeping the process alive. */
  private startPruning(): void {
    if (this.pruning !== undefined || this.closed) return;
    const prune = () => void this.prune().catch((error: unknown) => (this.closed ? undefined : this.report(error)));
    prune();
    this.pruning = setInterval(prune, Math.min(3_600_000, Math.max(1_000, Math.floor(this.retentionMs / 4))));
    this.pruning.unref();
  }

  /** {@inheritDoc RunChannel.close} */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.pruning);
    this.followers.clear();
    this.controlHandlers.clear();
    this.queuedHandlers.clear();
    const listener = this.listener;
    this.listener = undefined;
    await (await listener?.catch(() => undefined))?.end().catch(() => undefined);
    await Promise.all([...this.writing.values()].map((state) => state.chain));
    await this.pool?.end().catch(() => undefined);
  }
}
