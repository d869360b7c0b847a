import type PgBoss from "pg-boss";
import { PostgresRunChannel } from "./postgres-run-channel";
import type { BackgroundJob, BackgroundOutcome, BackgroundQueue, BackgroundRunRecord, BackgroundRunState } from "./background-queue";

/**
 * Options of {@link PgBossQueue}.
 * @example
 * ```ts
 * new PgBossQueue({ connectionString: "postgres://rein@db/rein", retryLimit: 5 });
 * ```
 */
export interface PgBossQueueOptions {
  /** The Postgres database: the session store's (`postgres://…`). */
  readonly connectionString: string;
  /** The schema pg-boss keeps its tables in (its own, beside the store's). @default "rein_queue" */
  readonly schema?: string;
  /** The queue's name. @default "rein-runs" */
  readonly queueName?: string;
  /** Attempts after the first when a worker dies or fails a job. @default 3 */
  readonly retryLimit?: number;
  /** Seconds before a retry. @default 5 */
  readonly retryDelaySeconds?: number;
  /**
   * How long a job may stay active before pg-boss takes it as lost (its
   * worker killed) and retries it: longer than your longest run.
   * @default 900
   */
  readonly expireInSeconds?: number;
  /** How often an idle worker asks for a job (at least 0.5). @default 2 */
  readonly pollingIntervalSeconds?: number;
  /** How often pg-boss's maintenance (expiring lost jobs) runs. @default 60 */
  readonly maintenanceIntervalSeconds?: number;
  /** Connections of this process's pool. @default 10 */
  readonly maxConnections?: number;
  /** Receives pg-boss's background errors (a lost connection during polling). @default one line on stderr */
  readonly onError?: (error: unknown) => void;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The {@link BackgroundQueue} on pg-boss 10 (`pg-boss` 10.4.2, the last
 * line that runs on Node 20): jobs live in Postgres — the session store's
 * database, in a schema of their own — so every server and `rein worker`
 * on that database shares one queue, and a job whose worker was killed is
 * retried by pg-boss once it expires. pg-boss is loaded on first use: a
 * server without a queue never loads it.
 * @example
 * ```ts
 * const queue = new PgBossQueue({ connectionString: url });
 * const app = createServer({ entries, store: new PostgresSessionStore({ connectionString: url }), queue });
 * ```
 */
export class PgBossQueue implements BackgroundQueue {
  private readonly options: PgBossQueueOptions;
  private readonly queueName: string;
  private boss: Promise<PgBoss> | undefined;
  private stopped = false;
  private runChannel: PostgresRunChannel | undefined;
  private stopWaking: (() => void) | undefined;
  private waking: Promise<void> | undefined;
  private wakeAgain = false;

  constructor(options: PgBossQueueOptions) {
    if (typeof options !== "object" || options === null || typeof options.connectionString !== "string" || options.connectionString === "") {
      throw new TypeError("new PgBossQueue(options): options.connectionString must be a postgres:// URL (the session store's database)");
    }
    const positive = (name: keyof PgBossQueueOptions, minimum: number) => {
      const value = options[name];
      if (value !== undefined && (typeof value !== "number" || !Number.isFinite(value) || value < minimum)) {
        throw new TypeError(`new PgBossQueue(options): options.${name} must be a number of at least ${minimum}, got ${String(value)}`);
      }
    };
    positive("retryLimit", 0);
    positive("retryDelaySeconds", 0);
    positive("expireInSeconds", 1);
    positive("pollingIntervalSeconds", 0.5);
    positive("maintenanceIntervalSeconds", 1);
    positive("maxConnections", 2);
    this.options = options;
    this.queueName = options.queueName ?? "rein-runs";
  }

  /**
   * The runs' events and control requests on the same database: tables in
   * the queue's schema, `LISTEN/NOTIFY` for what is live (opened on first use).
   */
  get channel(): PostgresRunChannel {
    this.runChannel ??= new PostgresRunChannel({
      connectionString: this.options.connectionString,
      schema: this.options.schema ?? "rein_queue",
      // pg-boss creates the schema: the channel's tables go in after it.
      before: () => this.start(),
      ...(this.options.onError === undefined ? {} : { onError: this.options.onError }),
    });
    return this.runChannel;
  }

  /** Starts pg-boss once (creating its schema and the queue on first use of the database). */
  private start(): Promise<PgBoss> {
    if (this.stopped) return Promise.reject(new Error("PgBossQueue is stopped"));
    this.boss ??= (async () => {
      // Loaded here, not at import: @rein/server without a queue never needs pg-boss.
      const PgBossClass = require("pg-boss") as typeof PgBoss;
      const o = this.options;
      const boss = new PgBossClass({
        connectionString: o.connectionString,
        schema: o.schema ?? "rein_queue",
        max: o.maxConnections ?? 10,
        schedule: false,
        maintenanceIntervalSeconds: o.maintenanceIntervalSeconds ?? 60,
      });
      boss.on("error", o.onError ?? ((error: unknown) => process.stderr.write(`rein queue: ${error instanceof Error ? error.message : String(error)}\n`)));
      await boss.start();
      await boss.createQueue(this.queueName, {
        name: this.queueName,
        retryLimit: o.retryLimit ?? 3,
        retryDelay: o.retryDelaySeconds ?? 5,
        expireInSeconds: o.expireInSeconds ?? 900,
      });
      return boss;
    })();
    return this.boss;
  }

  /** {@inheritDoc BackgroundQueue.send} */
  async send(job: BackgroundJob): Promise<void> {
    if (!UUID.test(job.runId)) throw new TypeError(`PgBossQueue.send: runId must be a UUID, got '${job.runId.slice(0, 64)}'`);
    const boss = await this.start();
    await boss.send(this.queueName, job as unknown as object, { id: job.runId });
    this.wakeWorkers();
  }

  /**
   * Idle workers anywhere ask for the new run now rather than at their next
   * poll: one NOTIFY at a time, the runs queued meanwhile sharing the next
   * (a burst of sends costs a few, not one each). A lost wake-up only costs
   * that poll.
   */
  private wakeWorkers(): void {
    if (this.waking !== undefined) {
      this.wakeAgain = true;
      return;
    }
    this.waking = this.channel
      .announceQueued()
      .catch(() => undefined)
      .finally(() => {
        this.waking = undefined;
        if (this.wakeAgain && !this.stopped) {
          this.wakeAgain = false;
          this.wakeWorkers();
        }
      });
  }

  /** {@inheritDoc BackgroundQueue.get} */
  async get(runId: string): Promise<BackgroundRunRecord | undefined> {
    if (!UUID.test(runId)) return undefined;
    const boss = await this.start();
    const found = await boss.getJobById<BackgroundJob>(this.queueName, runId, { includeArchive: true });
    if (found === null) return undefined;
    const output = found.output as unknown;
    if (found.state === "completed" && isOutcome(output)) return { job: found.data, state: output.status, outcome: output };
    if (found.state === "failed" || found.state === "completed") {
      // Out of retries (or a result that is not an outcome): the last attempt's error, as pg-boss recorded it.
      const error = errorOf(output);
      return { job: found.data, state: "error", outcome: { status: "error", result: null, error: { type: "worker_error", ...error } } };
    }
    return { job: found.data, state: STATE_OF[found.state] };
  }

  /** {@inheritDoc BackgroundQueue.work} */
  async work(concurrency: number, handler: (job: BackgroundJob) => Promise<BackgroundOutcome>): Promise<void> {
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new TypeError(`PgBossQueue.work: concurrency must be a positive integer, got ${String(concurrency)}`);
    const boss = await this.start();
    // pg-boss 10 runs one job at a time per worker: N workers of batch size 1 are N runs at once.
    const ids: string[] = [];
    for (let index = 0; index < concurrency; index++) {
      // Known once work() answers; its first job may start before that.
      let id: string | undefined;
      id = await boss.work<BackgroundJob>(
        this.queueName,
        { batchSize: 1, pollingIntervalSeconds: this.options.pollingIntervalSeconds ?? 2 },
        async ([job]) => {
          if (job === undefined) return undefined;
          try {
            return await handler(job.data);
          } finally {
            // pg-boss 10 waits out its polling interval even after a job: a worker that just ran one asks for the next at once.
            if (id !== undefined) boss.notifyWorker(id);
          }
        },
      );
      ids.push(id);
    }
    this.stopWaking = this.channel.onQueued(() => {
      for (const id of ids) boss.notifyWorker(id);
    });
  }

  /** {@inheritDoc BackgroundQueue.stopTaking} */
  async stopTaking(): Promise<void> {
    this.stopWaking?.();
    const boss = await this.boss?.catch(() => undefined);
    // Each pg-boss worker ends its polling loop once its current job (if any) settles.
    await boss?.offWork(this.queueName);
  }

  /** {@inheritDoc BackgroundQueue.stop} */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.stopWaking?.();
    await this.waking;
    await this.runChannel?.close();
    const started = this.boss;
    if (started === undefined) return;
    const boss = await started.catch(() => undefined);
    // Not graceful: jobs still running are left active, so pg-boss retries them after they expire (another worker finishes them).
    await boss?.stop({ graceful: false, wait: true, close: true });
  }
}

const STATE_OF: Record<"created" | "retry" | "active" | "cancelled", BackgroundRunState> = {
  created: "queued",
  retry: "interrupted",
  active: "running",
  cancelled: "cancelled",
};

function isOutcome(value: unknown): value is BackgroundOutcome {
  if (typeof value !== "object" || value === null) return false;
  const status = (value as { status?: unknown }).status;
  return status === "completed" || status === "error" || status === "cancelled";
}

/** A store or connection fault's own message names the database (host, port, schema): never shown to a client. */
const STORE_FAULT = /Postgres|Sqlite|SessionStore|Connection|ECONNREFUSED|ETIMEDOUT|ENOTFOUND/i;

/**
 * @internal The error a client sees for a job pg-boss gave up on: the last
 * attempt's name and message, except that a store or connection fault's
 * message (it names the database) is replaced by a sentence without it.
 */
export function errorOf(output: unknown): { name: string; message: string } {
  const record = typeof output === "object" && output !== null ? (output as { name?: unknown; message?: unknown }) : {};
  const name = typeof record.name === "string" ? record.name.slice(0, 100) : "Error";
  const message = typeof record.message === "string" ? record.message : "the job failed without a message";
  if (STORE_FAULT.test(name) || STORE_FAULT.test(message)) return { name, message: "the session store was unavailable for its last attempt; it is out of retries" };
  return { name, message: message.slice(0, 2000) };
}
