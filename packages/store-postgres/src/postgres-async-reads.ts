import {
  checkCreateSessionArguments,
  checkNodeId,
  checkSessionId,
  readAncestryOptionsSchema,
  type ReadAncestryOptions,
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

/**
 * The store's `asyncReads` (option `asyncWrites`): the worker's session
 * reads run on the asynchronous path's pool and are awaited, with the
 * synchronous methods' argument checks, results and typed faults.
 * @internal
 */
export function postgresAsyncReads(link: PostgresStoreLink, writes: PostgresAsyncWrites): SessionStoreAsyncReads {
  const onPool = async (operation: string, ...args: unknown[]): Promise<unknown> => {
    link.assertOpen();
    const started = Date.now();
    try {
      return await writes.run(operation, ...args);
    } catch (error) {
      throw link.fault(error, Date.now() - started);
    }
  };
  return {
    async getSession(id) {
      checkSessionId("PostgresSessionStore.asyncReads.getSession", id);
      return sessionFromRow((await onPool("getSession", id)) as Row);
    },
    async createSession(id, options = {}) {
      checkCreateSessionArguments("PostgresSessionStore.asyncReads.createSession", id, options);
      return sessionFromRow((await onPool("createSession", id, options.agentId ?? null, options.title ?? null)) as Row);
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
