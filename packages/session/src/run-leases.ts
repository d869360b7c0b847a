import type { SessionCommitOptions } from "./session-store-like";
import type { LeaseFence } from "./lease-fence";

export type { LeaseFence } from "./lease-fence";

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
  /**
   * The epoch of the run's current (or last) lease: 1 once registered, one
   * more with every successful claim. A write fenced with another epoch is
   * refused ({@link LeaseFence}). Undefined from a store that keeps no
   * epochs (one written before them): its runs' writes are not fenced.
   */
  readonly leaseEpoch?: number;
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
 * Every lease has an epoch ({@link RunRecord.leaseEpoch}): 1 when the run
 * is registered, one more with every claim. The holder's writes carry it —
 * a commit's `fences` ({@link LeaseFence}), and the `epoch` argument of
 * {@link renewRun} and {@link releaseRun} — and the store checks it in the
 * same transaction as the write: a worker whose lease expired and was
 * claimed by another cannot overwrite what the new holder wrote (its
 * writes are refused with a {@link LeaseLostError}).
 *
 * @example
 * ```ts
 * const seen = store.getRun(runId)!;
 * if (store.claimRun(runId, ["running", "paused"], 30_000, seen.leaseEpoch)) {
 *   const fence = { runId, epoch: seen.leaseEpoch! + 1 }; // this store's process owns the run until it releases it
 *   store.releaseRun(runId, "completed", null, fence.epoch);
 * }
 * ```
 */
export interface RunLeaseStore {
  /** Records a new run owned by this store, state `running`, leased for `leaseMs`; its lease epoch is 1. */
  registerRun(runId: string, sessionId: string, name: string, leaseMs: number): void;
  /**
   * Takes the run when its state is one of `states` and its lease is free
   * (see the interface doc); the run becomes `running`, owned by this store
   * for `leaseMs`, and its lease epoch goes up by one. False when another
   * live worker holds it, or its state is not one of `states`.
   *
   * `fromEpoch`: the epoch of the record the claimant looked at; the claim
   * is then refused (false) when the run's epoch is another by now (someone
   * claimed it meanwhile), so a claimant that gets it holds exactly
   * `fromEpoch + 1`.
   */
  claimRun(runId: string, states: readonly RunState[], leaseMs: number, fromEpoch?: number): boolean;
  /** Extends this store's lease; false when it no longer holds it (or, given `epoch`, when the run's lease epoch is another). */
  renewRun(runId: string, leaseMs: number, epoch?: number): boolean;
  /**
   * Optional: the lease calls of a running run without blocking the event
   * loop, on a store with an asynchronous path (the Postgres store's
   * `asyncWrites`). An async resumable run registers, renews and releases
   * its lease with them when the store has them.
   * @default absent: the synchronous methods
   */
  readonly asyncLeases?: RunLeaseAsyncCalls;
  /**
   * Gives the lease up and records the run's new state (and why, as JSON
   * text). Given `epoch`, checked in the same transaction: a run whose
   * lease epoch is another is left as it is, and the call throws a
   * {@link LeaseLostError}.
   */
  releaseRun(runId: string, state: RunState, reason: string | null, epoch?: number): void;
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

/**
 * A run row as the SQL stores select it:
 * `[runId, sessionId, name, state, reason, owned, leaseUntil, updatedAt, createdAt, leaseEpoch?]`
 * (`owned` as a boolean, `1` or `"1"`; times in ms since the epoch).
 */
export type RunRow = readonly unknown[];

/**
 * A {@link RunRow} as a {@link RunRecord}, the way every store reports runs
 * (a row without its tenth column, from a store written before lease
 * epochs, carries no `leaseEpoch`).
 *
 * @example
 * ```ts
 * runFromRow(["r1", "s1", "Pipeline.process", "running", null, 1, 1_700_000_060_000, 1_700_000_000_000, 1_700_000_000_000, 3]);
 * // { runId: "r1", sessionId: "s1", name: "Pipeline.process", state: "running", owned: true, leaseEpoch: 3, ... }
 * ```
 */
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
    // A store written before epochs returns nine columns: its runs carry none.
    ...(row[9] === null || row[9] === undefined ? {} : { leaseEpoch: Number(row[9]) }),
  };
}

const RUN_STATES: readonly RunState[] = ["running", "interrupted", "paused", "cancelled", "error", "completed"];

/**
 * The argument checks every store applies to its {@link RunLeaseStore}
 * methods, so a wrong argument is the same `TypeError` whichever store is
 * used: `runId` a non-empty string, `leaseMs` a positive number, `states` an
 * array of {@link RunState}s, `epoch` (a lease epoch, when given) a positive
 * integer. `where` names the method in the message.
 *
 * @example
 * ```ts
 * claimRun(runId: string, leaseMs: number): RunRecord | undefined {
 *   checkRunArguments("MyStore.claimRun", runId, leaseMs);
 *   // ...
 * }
 * ```
 */
export function checkRunArguments(where: string, runId: unknown, leaseMs?: unknown, states?: unknown, epoch?: unknown): void {
  if (epoch !== undefined && !(typeof epoch === "number" && Number.isSafeInteger(epoch) && epoch >= 1)) {
    throw new TypeError(`${where}: a lease epoch must be a positive integer (RunRecord.leaseEpoch), got ${JSON.stringify(epoch)}`);
  }
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

/**
 * The fences of a commit's options, checked as every store checks them;
 * empty when the commit is not fenced. The store then refuses the whole
 * commit with a `LeaseLostError` when a fenced run's lease epoch is another
 * (the contract suite checks this).
 *
 * @example
 * ```ts
 * commit(sessionId: string, operations: readonly SessionWriteOperation[], options?: SessionCommitOptions): SessionCommitResult {
 *   const fences = commitFences("MyStore.commit", options);
 *   // in the commit's transaction: for each fence, compare the run's lease epoch with fence.epoch
 * }
 * ```
 */
export function commitFences(where: string, options: SessionCommitOptions | undefined): readonly LeaseFence[] {
  if (options === undefined) return NO_FENCES;
  if (typeof options !== "object" || options === null) throw new TypeError(`${where}: options must be an object, got ${JSON.stringify(options)}`);
  const fences = options.fences;
  if (fences === undefined) return NO_FENCES;
  if (!Array.isArray(fences)) throw new TypeError(`${where}: options.fences must be an array of { runId, epoch }, got ${JSON.stringify(fences)}`);
  for (const fence of fences as readonly LeaseFence[]) {
    if (typeof fence !== "object" || fence === null) throw new TypeError(`${where}: options.fences must hold { runId, epoch } objects, got ${JSON.stringify(fence)}`);
    checkRunArguments(`${where} (options.fences)`, fence.runId, undefined, undefined, fence.epoch);
    if (fence.epoch === undefined) throw new TypeError(`${where}: options.fences: the fence of run '${fence.runId}' has no epoch`);
  }
  return fences;
}

const NO_FENCES: readonly LeaseFence[] = Object.freeze([]);

/**
 * The calls of {@link RunLeaseStore} a store with an asynchronous path also
 * offers awaited, never blocking the event loop (the lease calls of a
 * running run, and the reads of the runs routes): same arguments, results
 * and errors as the synchronous methods.
 * @example
 * ```ts
 * const renewed = await store.asyncLeases?.renewRun(runId, 30_000, epoch);
 * ```
 */
export interface RunLeaseAsyncCalls {
  /** {@link RunLeaseStore.registerRun}, awaited. */
  registerRun(runId: string, sessionId: string, name: string, leaseMs: number): Promise<void>;
  /** {@link RunLeaseStore.claimRun}, awaited. Optional (added later): without it the synchronous method is used. */
  claimRun?(runId: string, states: readonly RunState[], leaseMs: number, fromEpoch?: number): Promise<boolean>;
  /** {@link RunLeaseStore.renewRun}, awaited. */
  renewRun(runId: string, leaseMs: number, epoch?: number): Promise<boolean>;
  /** {@link RunLeaseStore.releaseRun}, awaited. */
  releaseRun(runId: string, state: RunState, reason: string | null, epoch?: number): Promise<void>;
  /** {@link RunLeaseStore.getRun}, awaited. */
  getRun(runId: string): Promise<RunRecord | undefined>;
  /** {@link RunLeaseStore.listRuns}, awaited. */
  listRuns(states?: readonly RunState[]): Promise<RunRecord[]>;
}
