import { awaitedLeases, isRunLeaseStore, type RunLeaseStore, type RunRecord, type RunState, type SessionGraphFormat, type SessionInfo, type SessionNode, type SessionStoreLike } from "rein";

/** The store's runs, or none when the store keeps no runs. @internal */
export function runsOf(store: SessionStoreLike): RunLeaseStore | undefined {
  return isRunLeaseStore(store) ? store : undefined;
}

/**
 * @internal The server's reads of its store (the read routes, the Inspector's, a run's head), on the store's pool when
 * it has one (`asyncReads`, `asyncLeases`: the Postgres store's
 * `asyncWrites`), so a slow or stalled database holds only the request that
 * reads it, never the event loop; synchronous on other stores.
 */
export interface StoreReads {
  hasSession(id: string): Promise<boolean>;
  getSession(id: string): Promise<SessionInfo>;
  readNodes(sessionId: string): Promise<SessionNode[]>;
  head(sessionId: string): Promise<string | null>;
  listSessions(): Promise<SessionInfo[]>;
  exportGraph(sessionId: string, format: SessionGraphFormat): Promise<string>;
  /** Undefined when the store keeps no runs or has no run of `runId`. */
  getRun(runId: string): Promise<RunRecord | undefined>;
  /** `[]` when the store keeps no runs. */
  listRuns(states?: readonly RunState[]): Promise<RunRecord[]>;
}

/** @internal {@link StoreReads} of `store`. */
export function storeReads(store: SessionStoreLike): StoreReads {
  const reads = store.asyncReads;
  const runs = runsOf(store);
  const leases = runs === undefined ? undefined : awaitedLeases(runs);
  return {
    hasSession: async (id) => (reads === undefined ? store.hasSession(id) : reads.hasSession(id)),
    getSession: async (id) => (reads === undefined ? store.getSession(id) : reads.getSession(id)),
    readNodes: async (sessionId) => (reads === undefined ? store.readNodes(sessionId) : reads.readNodes(sessionId)),
    head: async (sessionId) => (reads === undefined ? store.head(sessionId) : reads.head(sessionId)),
    listSessions: async () => (reads?.listSessions === undefined ? store.listSessions() : reads.listSessions()),
    exportGraph: async (sessionId, format) => (reads?.exportGraph === undefined ? store.exportGraph(sessionId, { format }) : reads.exportGraph(sessionId, { format })),
    getRun: async (runId) => (leases === undefined ? undefined : leases.getRun(runId)),
    listRuns: async (states) => (leases === undefined ? [] : leases.listRuns(states)),
  };
}
