/**
 * The state of a resumable run as its store keeps it:
 * - `running`: a worker owns it through a lease (or owned it and died:
 *   the lease expired, or the store knows the owner is gone);
 * - `interrupted`: its host stopped it on the way down (shutdown);
 * - `paused`: it waits for `resumeRun` (an explicit pause, an incompatible
 *   code change, a pending approval, an external step without a result);
 * - `cancelled`, `error`, `completed`: it ended.
 */
export type RunState = "running" | "interrupted" | "paused" | "cancelled" | "error" | "completed";

/**
 * One resumable run as {@link RunLeaseStore.listRuns} reports it.
 * @example
 * ```ts
 * const waiting = store.listRuns().filter((run) => run.state === "paused");
 * ```
 */
export interface RunRecord {
  /** The run's code node id (unique across processes). */
  readonly runId: string;
  /** The session that holds the run's nodes. */
  readonly sessionId: string;
  /** The resumable method (`Pipeline.process`). */
  readonly name: string;
  readonly state: RunState;
  /** Why the run is paused or stopped, as JSON text; null while it runs. */
  readonly reason: string | null;
  /** True when a worker holds the run's lease (possibly expired or dead: see {@link RunLeaseStore.claimRun}). */
  readonly owned: boolean;
  /** Epoch milliseconds until which the lease holds, or null. */
  readonly leaseUntil: number | null;
  /** Epoch milliseconds of the run's last sign of life (start, lease renewal, release). */
  readonly updatedAt: number;
  readonly createdAt: number;
}

/**
 * What a store offers for resumable runs that several workers may pick up:
 * a table of runs, each owned through a lease with an expiry. The built-in
 * stores ({@link InMemorySessionStore}, {@link SessionStore} and
 * `PostgresSessionStore`) implement it; a lease is owned by one store
 * instance (one per process).
 *
 * A lease is free when nobody holds it, when it expired, or when the store
 * can tell that its holder is gone (SQLite: a dead process on this host;
 * Postgres: a store whose connection ended). Claims are atomic: of several
 * workers claiming one free run, exactly one gets it.
 *
 * @example
 * ```ts
 * if (isRunLeaseStore(store) && store.claimRun(runId, ["running", "paused"], 30_000)) {
 *   // this store's process owns the run until it releases it
 * }
 * ```
 */
export interface RunLeaseStore {
  /** Records a new run owned by this store, state `running`, leased for `leaseMs`. */
  registerRun(runId: string, sessionId: string, name: string, leaseMs: number): void;
  /**
   * Takes the run when its state is one of `states` and its lease is free
   * (see the interface doc); the run becomes `running`, owned by this store
   * for `leaseMs`. False when another live worker holds it, or its state is
   * not one of `states`.
   */
  claimRun(runId: string, states: readonly RunState[], leaseMs: number): boolean;
  /** Extends this store's lease; false when it no longer holds it. */
  renewRun(runId: string, leaseMs: number): boolean;
  /** Gives the lease up and records the run's new state (and why, as JSON text). */
  releaseRun(runId: string, state: RunState, reason: string | null): void;
  /** The run, or undefined. */
  getRun(runId: string): RunRecord | undefined;
  /** Every run of the store, oldest first (`states` narrows them). */
  listRuns(states?: readonly RunState[]): RunRecord[];
}

/**
 * True when `store` keeps resumable runs ({@link RunLeaseStore}).
 * @example
 * ```ts
 * if (!isRunLeaseStore(store)) throw new TypeError("this store cannot hold resumable runs");
 * ```
 */
export function isRunLeaseStore(store: object): store is RunLeaseStore {
  const candidate = store as Partial<RunLeaseStore>;
  return typeof candidate.claimRun === "function" && typeof candidate.registerRun === "function" && typeof candidate.listRuns === "function";
}

/** A run row as the SQL stores return it: `[runId, sessionId, name, state, reason, owned, leaseUntil, updatedAt, createdAt]`. @internal */
export type RunRow = readonly unknown[];

/** @internal */
export function runFromRow(row: RunRow): RunRecord {
  return {
    runId: String(row[0]),
    sessionId: String(row[1]),
    name: String(row[2]),
    state: String(row[3]) as RunState,
    reason: row[4] === null || row[4] === undefined ? null : String(row[4]),
    owned: row[5] === true || row[5] === 1 || row[5] === "1",
    leaseUntil: row[6] === null || row[6] === undefined ? null : Number(row[6]),
    updatedAt: Number(row[7]),
    createdAt: Number(row[8]),
  };
}

const RUN_STATES: readonly RunState[] = ["running", "interrupted", "paused", "cancelled", "error", "completed"];

/** Argument checks every store applies to the run-lease methods. @internal */
export function checkRunArguments(where: string, runId: unknown, leaseMs?: unknown, states?: unknown): void {
  if (typeof runId !== "string" || runId.length === 0) throw new TypeError(`${where}: runId must be a non-empty string, got ${JSON.stringify(runId)}`);
  if (leaseMs !== undefined && !(typeof leaseMs === "number" && Number.isFinite(leaseMs) && leaseMs > 0)) {
    throw new TypeError(`${where}: leaseMs must be a positive number of milliseconds, got ${JSON.stringify(leaseMs)}`);
  }
  if (states !== undefined) {
    if (!Array.isArray(states) || !states.every((state) => RUN_STATES.includes(state as RunState))) {
      throw new TypeError(`${where}: states must be an array of ${RUN_STATES.map((s) => `"${s}"`).join(", ")}`);
    }
  }
}
