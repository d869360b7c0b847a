/**
 * The faults about a record of the store: a session or node that is not
 * there or already is, a closed store, a lease another worker has taken.
 */
import { SessionStoreError } from "./session-store-error";

/**
 * A session id that the store does not hold.
 *
 * @example
 * ```ts
 * err.message; // "Session 's1' does not exist in session store 'a.db'. Create it with store.createSession('s1', { agentId }) or pick an id from store.listSessions()."
 * ```
 */
export class SessionNotFoundError extends SessionStoreError {
  static {
    this.defineErrorName("SessionNotFoundError");
  }

  /** The id that was asked for. */
  readonly sessionId: string;

  constructor(sessionId: string, location: string) {
    super(
      `Session '${sessionId}' does not exist in session store '${location}'. ` +
        `Create it with store.createSession('${sessionId}', { agentId }) or pick an id from store.listSessions().`,
      location,
    );
    this.sessionId = sessionId;
  }
}

/**
 * `createSession` was given an id that is already taken. The existing
 * session is left as it is.
 *
 * @example
 * ```ts
 * err.sessionId; // "s1"
 * ```
 */
export class SessionExistsError extends SessionStoreError {
  static {
    this.defineErrorName("SessionExistsError");
  }

  /** The id that is already taken. */
  readonly sessionId: string;

  constructor(sessionId: string, location: string) {
    super(
      `Session '${sessionId}' already exists in session store '${location}'. ` +
        `Continue it with store.getSession('${sessionId}'), or choose another id.`,
      location,
    );
    this.sessionId = sessionId;
  }
}

/**
 * A node id that is not in the session (for `setHead`, `update`, or a
 * history head).
 *
 * @example
 * ```ts
 * err.message; // "Node 'n9' does not exist in session 's1' (session store 'a.db'). Pick an id from writer.load().nodes or store.listBranches('s1')."
 * ```
 */
export class SessionNodeNotFoundError extends SessionStoreError {
  static {
    this.defineErrorName("SessionNodeNotFoundError");
  }

  /** The session that was searched. */
  readonly sessionId: string;
  /** The node id that was not found. */
  readonly nodeId: string;

  constructor(sessionId: string, nodeId: string, location: string) {
    super(
      `Node '${nodeId}' does not exist in session '${sessionId}' (session store '${location}'). ` +
        `Pick an id from writer.load().nodes or store.listBranches('${sessionId}').`,
      location,
    );
    this.sessionId = sessionId;
    this.nodeId = nodeId;
  }
}

/**
 * The store was used after `close()`.
 *
 * @example
 * ```ts
 * store.close(); store.listSessions(); // throws SessionStoreClosedError
 * ```
 */
export class SessionStoreClosedError extends SessionStoreError {
  static {
    this.defineErrorName("SessionStoreClosedError");
  }

  constructor(location: string) {
    super(`Session store '${location}' is closed. Open a new SessionStore({ path: '${location}' }) to use it again.`, location);
  }
}

/**
 * A commit appended a node under an id that another, different node of the
 * session already has. Nothing of the commit was stored. (The same node sent
 * again — same role, name, caller, predecessor and creation time — is
 * harmless and ignored.)
 *
 * @example
 * ```ts
 * err.nodeId; // "n1"
 * ```
 */
export class SessionNodeConflictError extends SessionStoreError {
  static {
    this.defineErrorName("SessionNodeConflictError");
  }

  /** The session written to. */
  readonly sessionId: string;
  /** The id both nodes have. */
  readonly nodeId: string;

  constructor(sessionId: string, nodeId: string, location: string) {
    super(
      `Node id '${nodeId}' is already taken by another node in session '${sessionId}' (session store '${location}'). ` +
        `Nothing of this commit was stored: give each node its own id (the runtime uses 128-bit random ids).`,
      location,
    );
    this.sessionId = sessionId;
    this.nodeId = nodeId;
  }
}

/**
 * A write of a resumable run was made under a lease this worker no longer
 * holds: the run's lease moved on to another epoch (another worker claimed
 * the run after this worker's lease expired, say while its event loop was
 * blocked). The store checked the epoch in the same transaction as the
 * write and refused the whole write: nothing of it was stored, and what the
 * run's current holder wrote stands. Stop this attempt; do not retry the
 * write. The holder finishes the run (`store.getRun(runId)` shows it).
 *
 * @example
 * ```ts
 * try { await pipeline.process(url); } catch (error) {
 *   if (LeaseLostError.isInstance(error)) console.warn(`run ${error.runId} went on in another worker (epoch ${error.currentEpoch})`);
 * }
 * ```
 */
export class LeaseLostError extends SessionStoreError {
  static {
    this.defineErrorName("LeaseLostError");
  }

  /** The run whose write was refused. */
  readonly runId: string;
  /** The lease epoch the refused write was made under (the one this worker holds). */
  readonly heldEpoch: number;
  /** The run's lease epoch in the store when the write was refused; null when the store holds no such run (deleted with its session). */
  readonly currentEpoch: number | null;

  constructor(runId: string, heldEpoch: number, currentEpoch: number | null, location: string) {
    const now =
      currentEpoch === null
        ? `session store '${location}' holds no run '${runId}' any more (deleted with its session?)`
        : `run '${runId}' is at lease epoch ${currentEpoch} in session store '${location}' (another worker claimed it after this worker's lease expired)`;
    super(
      `This worker lost the lease of run '${runId}': it wrote under lease epoch ${heldEpoch}, but ${now}. ` +
        `Nothing of this write was stored: stop this attempt and leave the run to its current holder (store.getRun('${runId}')); ` +
        `if steps outlive their lease, raise resumable.leaseMs above the longest synchronous stretch of a step.`,
      location,
    );
    this.runId = runId;
    this.heldEpoch = heldEpoch;
    this.currentEpoch = currentEpoch;
  }
}
