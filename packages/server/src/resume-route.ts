import type { Hono } from "hono";
import { RunNotResumableError, RunPausedError, withReachBudget, withRunListener } from "rein";
import { SpendCapExceededError } from "./auth/spend-cap-error";
import { STATUS_OF, bounded } from "./http-error";
import { clientSessionId, ownsSession } from "./ownership";
import { readJsonObject } from "./request-body";
import { agentForRun, entryClassFor } from "./resume-runs";
import { storeReads } from "./store-reads";
import { RUN_ID, type RouteKit } from "./route-kit";
import { errorTypeOf, headOf, onHangUp } from "./run-outcome";
import { safeJson } from "./safe-json";
import { STORE_UNAVAILABLE } from "./store-fault";
import { shuttingDown } from "./flight";

/**
 * Mounts `POST /v1/runs/:id/resume`: an interrupted resumable run of the
 * caller's (another key's is a 404), continued by an agent of its class
 * entry under the received budget and the key's spend caps; a second
 * resume of a run in flight is 409.
 * @internal
 */
export function mountResumeRoute(app: Hono, kit: RouteKit): void {
  const { entries, store, policy, state, maxBodyBytes, report, who, fail, read, admit, fly, badRunId } = kit;
  app.post("/v1/runs/:id/resume", async (c) => {
    const caller = await who(c, "run");
    // Checked first, before the body is read; every run start checks it again (flight.ts).
    if (state.closing) throw shuttingDown();
    const id = c.req.param("id");
    const body = await readJsonObject(c.req.raw, c.req.header("content-length"), maxBodyBytes, '{ codeChangePolicy?: "keep_original" | "use_latest" }', {});
    for (const key of Object.keys(body)) {
      if (key !== "codeChangePolicy") return fail(c, "invalid_body", `body.${key.slice(0, 50)} is not a known field (codeChangePolicy)`);
    }
    const policyName = body["codeChangePolicy"];
    if (policyName !== undefined && policyName !== "keep_original" && policyName !== "use_latest") {
      return fail(c, "invalid_body", 'body.codeChangePolicy must be "keep_original" or "use_latest"');
    }
    const found = RUN_ID.test(id) ? await read(() => storeReads(store).getRun(id)) : undefined;
    // Another key's run is not found either.
    const record = found !== undefined && ownsSession(caller, found.sessionId) ? found : undefined;
    if (record === undefined) return fail(c, "not_found", `no resumable run '${bounded(id)}' in this server's store (GET /v1/runs lists them)`);
    const entry = entryClassFor(entries, record.name);
    if (entry === undefined) return fail(c, "not_found", `run ${id} is a run of ${bounded(record.name, 200)}, which no listed class entry of this server serves`);
    const { budget, traceparent, runId: requestId } = admit(c, caller, "resuming the run");
    const flight = await fly(caller, requestId, badRunId);
    const { controller, keyRun } = flight;
    const hangUp = onHangUp(c, controller);
    c.header("X-Run-Id", requestId);
    const base = { runId: id, sessionId: clientSessionId(caller, record.sessionId), budget };
    try {
      const agent = await agentForRun(entry, store, record, policy);
      const resume = () => agent.resumeRun(id, policyName === undefined ? {} : { codeChangePolicy: policyName });
      const result = await withRunListener(
        () => undefined,
        () => withReachBudget(budget, resume, { policy, ...(traceparent === undefined ? {} : { traceparent }) }),
        { signal: controller.signal, ...(keyRun?.spend === undefined ? {} : { spend: keyRun.spend }) },
      );
      return c.json(JSON.parse(safeJson({ ...base, result: result ?? null, status: "completed", ...(await headOf(store, record.sessionId)) })) as object);
    } catch (error) {
      const err = error instanceof Error ? error : new Error(String(error));
      if (RunNotResumableError.isInstance(err)) return fail(c, "run_conflict", err.message);
      const status = RunPausedError.isInstance(err) ? "paused" : controller.signal.aborted ? "cancelled" : "error";
      // The same statuses as a run's: a reach refusal 403, a provider failure 502, a store fault 503, anything else 200 with the error.
      const type = status === "paused" ? "run_paused" : errorTypeOf(err);
      if (type === "store_unavailable") report(err);
      const message = type === "store_unavailable" ? STORE_UNAVAILABLE : err.message;
      if (SpendCapExceededError.isInstance(err)) c.header("retry-after", String(err.retryAfterSeconds));
      const httpStatus = type === "reach_exceeded" || type === "budget_exhausted" || type === "provider_error" || type === "store_unavailable" ? STATUS_OF[type] : 200;
      return c.json(JSON.parse(safeJson({ ...base, result: null, status, ...(await headOf(store, record.sessionId)), error: { type, name: err.name, message } })) as object, httpStatus);
    } finally {
      hangUp();
      flight.land();
    }
  });
}
