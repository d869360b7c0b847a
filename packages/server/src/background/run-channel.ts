/**
 * One recorded event of a background run: its place in the run's log
 * (`seq`, from 1, the SSE `id`) and the event as JSON (a `RunEvent`, or the
 * closing `{ type: "run-end", status, ... }` the worker writes last).
 */
export interface StoredRunEvent {
  readonly seq: number;
  readonly event: { readonly type: string; readonly [field: string]: unknown };
}

/**
 * A request that travels from any instance to the process executing a run:
 * `cancel` (the run stops and ends `cancelled`), or the answer to one of its
 * tool calls waiting for approval: `approve` or `deny`, with the call's id.
 */
export interface RunControl {
  readonly runId: string;
  readonly action: "cancel" | "approve" | "deny";
  /** The tool call an `approve` or `deny` answers. */
  readonly toolCallId?: string;
}

/**
 * What servers and workers of one database share about background runs
 * beyond the queue: each run's events, recorded by the worker executing it
 * and readable (replayed, then followed live) from every instance, and
 * control requests (cancel) that reach the process executing the run,
 * wherever it is. {@link PostgresRunChannel} keeps both in Postgres (tables
 * beside the queue's, `LISTEN/NOTIFY` for what is live).
 * @example
 * ```ts
 * const channel = queue.channel!;
 * const stop = channel.follow(runId, () => void readMore());
 * await channel.control({ runId, action: "cancel" });
 * ```
 */
export interface RunChannel {
  /** Records `events` after those already recorded for the run (in order) and wakes its followers. */
  append(runId: string, events: readonly StoredRunEvent["event"][]): Promise<void>;
  /** The run's recorded events after `afterSeq` (0: from the start), oldest first, at most `limit`. */
  read(runId: string, afterSeq: number, limit?: number): Promise<StoredRunEvent[]>;
  /** Calls `wake` whenever events may have been appended to the run (in any process); returns the function that stops it. */
  follow(runId: string, wake: () => void): () => void;
  /**
   * Records a control request and tells every instance (the one executing
   * the run acts on it). Resolves `false`, sending nothing, when the run's
   * cancel or that tool call's answer was recorded before: each is given once.
   */
  control(request: RunControl): Promise<boolean>;
  /** The control requests recorded for a run (one sent before its worker listened is not lost). */
  controlsOf(runId: string): Promise<RunControl[]>;
  /** Calls `handler` with every control request sent from now on (any instance); returns the function that stops it. */
  onControl(handler: (request: RunControl) => void): () => void;
  /** Forgets what this process keeps to append to the run (its attempt ended). */
  release?(runId: string): void;
  /** Closes the channel's connections. */
  close(): Promise<void>;
}
