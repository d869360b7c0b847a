import type { RunChannel } from "./run-channel";

/**
 * A background run as it travels on the queue: everything a worker in
 * another process needs to run the entry as the server would have, and
 * nothing it could not trust the server for (the budget was admitted and
 * clamped by the server that accepted the request).
 * @example
 * ```ts
 * await queue.send({ runId, entry: "research", args: ["x"], sessionId: "s1", storedSessionId: "k.1.s1", owner: "k.1", budget: { depth: 2 } });
 * ```
 */
export interface BackgroundJob {
  /** The run's id, 128-bit random, in UUID form (`GET /v1/runs/:id`). */
  readonly runId: string;
  /** The listed entry's name. */
  readonly entry: string;
  /** The method's arguments (JSON). */
  readonly args: readonly unknown[];
  /** The session as the caller names it. */
  readonly sessionId: string;
  /** The session as stored (the caller's owner prefix included). */
  readonly storedSessionId: string;
  /** The owner key of the caller (`""` on a server without auth): only it (or an admin) reads the run. */
  readonly owner: string;
  /** The admitted budget, in its JSON form: an unlimited figure (`Infinity`) is `null`. */
  readonly budget: { readonly [figure: string]: number | null | readonly string[] | undefined };
  /** The request's `traceparent`, continued by the worker. */
  readonly traceparent?: string;
  /** The caller's run that issued a signed `X-Agent-Policy`. */
  readonly callerRunId?: string;
  /**
   * The id of the capped API key that submitted the run: the server took the
   * key's run slot (held as `runId`) when it queued the run, and the worker
   * reserves each model request against the key's caps and ends the slot.
   */
  readonly keyId?: string;
}

/**
 * How a background run ended, recorded by the worker as the job's output.
 * @example
 * ```ts
 * if (outcome.status === "error") console.error(outcome.error?.message);
 * ```
 */
export interface BackgroundOutcome {
  readonly status: "completed" | "error" | "cancelled";
  readonly result: unknown;
  readonly error?: { readonly type: string; readonly name: string; readonly message: string };
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number };
  readonly headId?: string;
}

/**
 * Where a background run is: `queued` (waiting for a worker), `running`,
 * `interrupted` (its worker died or failed; the queue retries it),
 * then as it ended: `completed`, `error` or `cancelled` — the states of
 * `GET /v1/runs`, plus `queued`.
 */
export type BackgroundRunState = "queued" | "running" | "interrupted" | "completed" | "error" | "cancelled";

/**
 * A background run as the queue knows it, read from the database (any
 * instance sees it).
 */
export interface BackgroundRunRecord {
  readonly job: BackgroundJob;
  readonly state: BackgroundRunState;
  /** Present once the run ended. */
  readonly outcome?: BackgroundOutcome;
}

/**
 * What the server and `rein worker` need of a job queue: put a run on it,
 * read a run back by id, and execute runs. {@link PgBossQueue} is the one
 * Rein ships (pg-boss on the session store's Postgres database).
 * @example
 * ```ts
 * const queue: BackgroundQueue = new PgBossQueue({ connectionString: process.env.DATABASE_URL! });
 * createServer({ entries, store, queue });
 * ```
 */
export interface BackgroundQueue {
  /** Puts a run on the queue; resolves once it is stored. */
  send(job: BackgroundJob): Promise<void>;
  /** The run of that id, or `undefined` (never queued, or removed from the queue's history). */
  get(runId: string): Promise<BackgroundRunRecord | undefined>;
  /**
   * Executes queued runs with `concurrency` at a time in this process until
   * {@link BackgroundQueue.stop}: `handler` resolves with the run's outcome
   * (recorded as the job's result); a rejection is a failed attempt, retried
   * by the queue.
   */
  work(concurrency: number, handler: (job: BackgroundJob) => Promise<BackgroundOutcome>): Promise<void>;
  /**
   * Stops taking jobs in this process: the handler is called for no new
   * job, the runs it was handed go on until they settle. A worker's stop
   * calls it first, so that a run it interrupts is not taken up again
   * here (and failed at once, spending a retry) before the queue stops.
   */
  stopTaking?(): Promise<void>;
  /** Stops working and closes the queue's connections. */
  stop(): Promise<void>;
  /**
   * Where the runs' events and control requests (cancel) travel between
   * instances: without one, `GET /v1/runs/:id/events` is a 501 and a
   * background run cannot be cancelled. {@link PgBossQueue} has one on its
   * database ({@link PostgresRunChannel}).
   */
  readonly channel?: RunChannel;
}
