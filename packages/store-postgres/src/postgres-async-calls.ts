import {
  checkCreateSessionArguments,
  checkRunArguments,
  runFromRow,
  checkNodeId,
  checkSessionId,
  exportGraphOptionsSchema,
  readAncestryOptionsSchema,
  renderSessionGraph,
  storableOrNull,
  type ReadAncestryOptions,
  type RunLeaseAsyncCalls,
  type SessionStoreAsyncReads,
} from "@rein/session";
import type { PostgresAsyncWrites } from "./postgres-async-writes";
import { nodesFromJson, sessionFromRow, type Row } from "./postgres-rows";
import type { PostgresStoreLink } from "./postgres-store-link";

/**
 * `turns` of readAncestry, checked as the other stores check it: null for no bound.
 * @internal
 */
export function checkTurns(options: ReadAncestryOptions): number | null {
  const turns = readAncestryOptionsSchema.parse(options).turns;
  if (turns === undefined || turns === Infinity) return null;
  return Math.min(turns, 2_147_483_647);
}

/** Runs one of the worker's operations on the pool, its faults typed as the synchronous path's are. @internal */
export type OnPool = (operation: string, ...args: unknown[]) => Promise<unknown>;

/**
 * The one way the store runs a worker operation on the asynchronous path's
 * pool: refused once the store is closed, and a failure typed as the
 * synchronous path's (`link.fault`).
 * @internal
 */
export function onPoolOf(link: PostgresStoreLink, writes: PostgresAsyncWrites): OnPool {
  return async (operation, ...args) => {
    link.assertOpen();
    const started = Date.now();
    try {
      return await writes.run(operation, ...args);
    } catch (error) {
      throw link.fault(error, Date.now() - started);
    }
  };
}

/**
 * The store's calls on the asynchronous path's pool (option `asyncWrites`):
 * its `asyncReads` and `asyncLeases`, the worker's operations run there and
 * awaited, with the synchronous methods' argument checks, results and typed
 * faults.
 * @internal
 */
export function postgresAsyncCalls(onPool: OnPool): { asyncReads: SessionStoreAsyncReads; asyncLeases: RunLeaseAsyncCalls } {
  return { asyncReads: asyncReads(onPool), asyncLeases: asyncLeases(onPool) };
}

function asyncLeases(onPool: OnPool): RunLeaseAsyncCalls {
  const where = "PostgresSessionStore.asyncLeases";
  return {
    async registerRun(runId, sessionId, name, leaseMs) {
      checkRunArguments(`${where}.registerRun`, runId, leaseMs);
      checkSessionId(`${where}.registerRun`, sessionId);
      await onPool("registerRun", runId, sessionId, name, leaseMs, Date.now());
    },
    async claimRun(runId, states, leaseMs, fromEpoch) {
      checkRunArguments(`${where}.claimRun`, runId, leaseMs, states, fromEpoch);
      return (await onPool("claimRun", runId, states, leaseMs, Date.now(), fromEpoch ?? null)) as boolean;
    },
    async renewRun(runId, leaseMs, epoch) {
      checkRunArguments(`${where}.renewRun`, runId, leaseMs, undefined, epoch);
      return (await onPool("renewRun", runId, leaseMs, Date.now(), epoch ?? null)) as boolean;
    },
    async releaseRun(runId, state, reason, epoch) {
      checkRunArguments(`${where}.releaseRun`, runId, undefined, [state], epoch);
      await onPool("releaseRun", runId, state, reason, Date.now(), epoch ?? null);
    },
    async getRun(runId) {
      checkRunArguments(`${where}.getRun`, runId);
      const found = (await onPool("getRun", runId)) as unknown[] | undefined;
      return found === undefined ? undefined : runFromRow(found);
    },
    async listRuns(states) {
      checkRunArguments(`${where}.listRuns`, "all", undefined, states);
      return ((await onPool("listRuns", states ?? null)) as unknown[][]).map(runFromRow);
    },
  };
}

function asyncReads(onPool: OnPool): SessionStoreAsyncReads {
  return {
    async getSession(id) {
      checkSessionId("PostgresSessionStore.asyncReads.getSession", id);
      return sessionFromRow((await onPool("getSession", id)) as Row);
    },
    async hasSession(id) {
      checkSessionId("PostgresSessionStore.asyncReads.hasSession", id);
      return (await onPool("hasSession", id)) as boolean;
    },
    async readNodes(sessionId) {
      checkSessionId("PostgresSessionStore.asyncReads.readNodes", sessionId);
      return ((await onPool("readNodes", sessionId)) as string[]).flatMap((page) => nodesFromJson(page));
    },
    async createSession(id, options = {}) {
      checkCreateSessionArguments("PostgresSessionStore.asyncReads.createSession", id, options);
      return sessionFromRow((await onPool("createSession", id, storableOrNull(options.agentId), storableOrNull(options.title))) as Row);
    },
    async exportGraph(sessionId, options = {}) {
      checkSessionId("PostgresSessionStore.asyncReads.exportGraph", sessionId);
      const { format = "json" } = exportGraphOptionsSchema.parse(options);
      const session = sessionFromRow((await onPool("getSession", sessionId)) as Row);
      const nodes = ((await onPool("readNodes", sessionId)) as string[]).flatMap((page) => nodesFromJson(page));
      return renderSessionGraph(session, nodes, format);
    },
    async listSessions() {
      return ((await onPool("listSessions")) as Row[]).map(sessionFromRow);
    },
    async head(sessionId) {
      checkSessionId("PostgresSessionStore.asyncReads.head", sessionId);
      const head = await onPool("head", sessionId);
      return head === null ? null : String(head);
    },
    async readAncestry(sessionId, nodeId, options = {}) {
      checkSessionId("PostgresSessionStore.asyncReads.readAncestry", sessionId);
      checkNodeId("PostgresSessionStore.asyncReads.readAncestry", nodeId);
      return nodesFromJson((await onPool("readAncestry", sessionId, nodeId, checkTurns(options))) as string);
    },
  };
}
