import { randomUUID } from "node:crypto";
import type { Hono, Context as HonoContext } from "hono";
import type { ReachBudget, SessionStoreLike } from "rein";
import type { ApiKeyScope, ApiKeyStore } from "../auth/api-key";
import { startKeyRun } from "../auth/key-spend";
import type { Caller } from "../auth/caller";
import { RequestError, bounded } from "../http-error";
import { clientSessionId, ownsSession, storedSessionId } from "../ownership";
import { storeReads } from "../store-reads";
import type { BackgroundQueue } from "./background-queue";
import { budgetToJob } from "./job-budget";
import { mountRunEventsRoute } from "./run-events-route";
import { storedValue } from "./stored-json";

/** @internal Whether a request asks for a background run (`Prefer: respond-async`, RFC 7240). */
export function prefersAsync(prefer: string | undefined): boolean {
  return prefer !== undefined && prefer.split(/[,;]/).some((token) => token.trim().toLowerCase() === "respond-async");
}

/** @internal The message of the 501 `queue_not_configured`. */
export const NO_QUEUE = "background runs (Prefer: respond-async) need a queue: createServer({ store: new PostgresSessionStore(...), queue: new PgBossQueue({ connectionString }) }), or drop the Prefer header to run in the request";

/**
 * @internal Puts an admitted run on the queue and returns its new id (a
 * UUID: 128 random bits) and the session it records to (as stored). The job carries the caller's owner key, so only
 * it (or an admin) reads the run; a queue that cannot be reached is a 503.
 * A capped key's run starts here as in the request ({@link startKeyRun}):
 * over a cap it is a 429 `budget_exhausted` with `Retry-After` and nothing
 * is queued; else its run slot is held (as the run's id) until the worker
 * that executes it ends it, and the job names the key.
 */
export async function enqueueRun(
  queue: BackgroundQueue,
  report: (error: unknown) => void,
  run: { caller: Caller; entry: string; args: readonly unknown[]; sessionId: string | undefined; budget: ReachBudget; traceparent: string | undefined; callerRunId?: string },
  keys?: ApiKeyStore,
): Promise<{ runId: string; storedSessionId: string }> {
  const runId = randomUUID();
  const sessionId = run.sessionId ?? `run-${runId}`;
  const stored = storedSessionId(run.caller, sessionId);
  const keyRun = await startKeyRun(keys, run.caller, report, runId);
  try {
    await queue.send({
      runId,
      entry: run.entry,
      args: storedValue<unknown[]>(run.args),
      sessionId,
      storedSessionId: stored,
      owner: run.caller.owner,
      budget: budgetToJob(run.budget),
      ...(run.traceparent === undefined ? {} : { traceparent: run.traceparent }),
      ...(run.callerRunId === undefined ? {} : { callerRunId: run.callerRunId }),
      ...(keyRun === undefined || run.caller.keyId === undefined ? {} : { keyId: run.caller.keyId }),
    });
  } catch (error) {
    report(error);
    await keyRun?.end().catch(report);
    throw new RequestError("store_unavailable", "the run queue is unavailable; retry later");
  }
  return { runId, storedSessionId: stored };
}

/**
 * @internal `GET /v1/runs/:id`: a run's `{ runId, state, result?, error?,
 * sessionId }` read from the database, so any instance answers for any
 * run — a background run from the queue, else a resumable run from the
 * store. Another key's run is a 404, as a run that does not exist. Also
 * mounts `GET /v1/runs/:id/events` (run-events-route.ts).
 */
export function mountRunRoute(
  app: Hono,
  options: {
    who: (c: HonoContext, scope: ApiKeyScope) => Promise<Caller>;
    queue: BackgroundQueue | undefined;
    store: SessionStoreLike;
    read: <R>(fn: () => R | Promise<R>) => Promise<R>;
    /** The server's: aborted when it closes, ending `GET /v1/runs/:id/events` streams. */
    ending: AbortSignal;
  },
): void {
  const { who, queue, store, read, ending } = options;
  mountRunEventsRoute(app, { who, queue, read, ending });
  app.get("/v1/runs/:id", async (c) => {
    const caller = await who(c, "read");
    const id = c.req.param("id");
    const queued = queue === undefined ? undefined : await read(() => queue.get(id));
    if (queued !== undefined && (caller.seesAll || queued.job.owner === caller.owner)) {
      const { job, state, outcome } = queued;
      const sessionId = caller.owner === job.owner ? job.sessionId : job.storedSessionId;
      return c.json({
        runId: job.runId,
        state,
        entry: job.entry,
        sessionId,
        ...(outcome === undefined ? {} : { result: outcome.result }),
        ...(outcome?.error === undefined ? {} : { error: outcome.error }),
        ...(outcome?.usage === undefined ? {} : { usage: outcome.usage }),
        ...(outcome?.headId === undefined ? {} : { headId: outcome.headId }),
      });
    }
    if (queued === undefined && id.length <= 128) {
      const record = await read(() => storeReads(store).getRun(id));
      if (record !== undefined && ownsSession(caller, record.sessionId)) {
        return c.json({ runId: record.runId, state: record.state, entry: record.name, sessionId: clientSessionId(caller, record.sessionId) });
      }
    }
    throw new RequestError("not_found", `no run '${bounded(id)}' (GET /v1/runs lists the resumable ones)`);
  });
}
