import type { Context as HonoContext, Hono } from "hono";
import type { ApiKeyScope } from "../auth/api-key";
import type { Caller } from "../auth/caller";
import { RequestError, bounded } from "../http-error";
import { readJsonObject } from "../request-body";
import type { BackgroundQueue } from "./background-queue";
import type { PendingApproval } from "../approvals";
import { safeJson } from "../safe-json";
import type { RunChannel, RunControl, StoredRunEvent } from "./run-channel";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ENDED = new Set(["completed", "error", "cancelled"]);

/**
 * @internal `GET /v1/runs/:id/approvals` and `POST
 * /v1/runs/:id/approvals/:toolCallId` `{ approve: boolean }` for a
 * background run, on any instance. The GET lists the calls its log shows
 * waiting (asked, not answered, no result yet; none once it was cancelled or
 * ended), as for a run in a request. The POST: the answer is recorded once and
 * sent on the queue's channel to the process executing the run, whose
 * waiting tool call then runs (approve) or is refused (deny). Answers `{
 * runId, toolCallId, approved }`; 404 when the run never asked about that
 * call (its log holds no `approval-request` for it), 409 `run_conflict`
 * when the call was answered before (the worker records a call that timed
 * out as denied), the run was cancelled, or the run has ended. A run that is
 * not a background run of the caller goes on to the in-process approvals
 * route (mounted after this one).
 */
export function mountBackgroundApprovalRoute(
  app: Hono,
  options: { who: (c: HonoContext, scope: ApiKeyScope) => Promise<Caller>; queue: BackgroundQueue | undefined; read: <R>(fn: () => R | Promise<R>) => Promise<R>; maxBodyBytes: number },
): void {
  const { who, queue, read } = options;
  /** The caller's background run the request names, with the queue's channel; undefined for the in-process route. */
  const backgroundRun = async (c: HonoContext, scope: ApiKeyScope) => {
    const channel = queue?.channel;
    const runId = c.req.param("id") ?? "";
    if (queue === undefined || channel === undefined || !UUID.test(runId)) return undefined;
    const caller = await who(c, scope);
    const record = await read(() => queue.get(runId));
    if (record === undefined || !(caller.seesAll || record.job.owner === caller.owner)) return undefined;
    return { channel, runId, record };
  };
  app.on("GET", "/v1/runs/:id/approvals", async (c, next) => {
    const run = await backgroundRun(c, "read");
    if (run === undefined) return next();
    const { channel, runId, record } = run;
    if (ENDED.has(record.state)) return c.json({ runId, approvals: [] });
    const approvals = await read(async () => waitingCalls(await readLog(channel, runId), await channel.controlsOf(runId)));
    return c.body(safeJson({ runId, approvals }), 200, { "content-type": "application/json" });
  });
  app.on("POST", "/v1/runs/:id/approvals/:toolCallId", async (c, next) => {
    const run = await backgroundRun(c, "run");
    if (run === undefined) return next();
    const { channel, runId, record } = run;
    const toolCallId = c.req.param("toolCallId");
    const body = await readJsonObject(c.req.raw, c.req.header("content-length"), options.maxBodyBytes, "{ approve: boolean }");
    for (const key of Object.keys(body)) {
      if (key !== "approve") throw new RequestError("invalid_body", `body.${bounded(key, 50)} is not a known field (approve)`);
    }
    const approve = body["approve"];
    if (typeof approve !== "boolean") throw new RequestError("invalid_body", "body.approve must be true or false: { approve: boolean }");
    if (!(await read(() => askedFor(channel, runId, toolCallId)))) {
      throw new RequestError("not_found", `run ${runId} has no tool call '${bounded(toolCallId)}' waiting for approval (its approval-request events on GET /v1/runs/${runId}/events name them)`);
    }
    if (ENDED.has(record.state)) throw new RequestError("run_conflict", `run ${runId} has ended (${record.state}): nothing waits for an answer`);
    if ((await read(() => channel.controlsOf(runId))).some((request) => request.action === "cancel")) {
      throw new RequestError("run_conflict", `run ${runId} was cancelled: its waiting tool calls were denied`);
    }
    const first = await read(() => channel.control({ runId, action: approve ? "approve" : "deny", toolCallId }));
    if (!first) throw new RequestError("run_conflict", `tool call '${bounded(toolCallId)}' of run ${runId} was answered already (or timed out, denied)`);
    return c.json({ runId, toolCallId, approved: approve });
  });
}

/** Whether the run's log holds an `approval-request` for the call. */
async function askedFor(channel: RunChannel, runId: string, toolCallId: string): Promise<boolean> {
  return (await readLog(channel, runId)).some((event) => event.type === "approval-request" && event["toolCallId"] === toolCallId);
}

/** The run's whole log, in order. */
async function readLog(channel: RunChannel, runId: string): Promise<StoredRunEvent["event"][]> {
  const log: StoredRunEvent["event"][] = [];
  for (let after = 0; ; ) {
    const events = await channel.read(runId, after, 1000);
    if (events.length === 0) return log;
    for (const { seq, event } of events) {
      after = seq;
      log.push(event);
    }
  }
}

/**
 * The calls a background run's log shows waiting: asked (`approval-request`),
 * with no `tool-result` after, no recorded answer, not past their expiry,
 * and no cancel or end of the run — as `GET /v1/runs/:id/approvals` lists a
 * run in a request.
 */
function waitingCalls(log: readonly StoredRunEvent["event"][], controls: readonly RunControl[]): PendingApproval[] {
  if (controls.some((request) => request.action === "cancel") || log.some((event) => event.type === "run-end")) return [];
  const answered = new Set(controls.flatMap((request) => (request.toolCallId === undefined ? [] : [request.toolCallId])));
  const waiting = new Map<string, PendingApproval>();
  for (const event of log) {
    const toolCallId = typeof event["toolCallId"] === "string" ? event["toolCallId"] : undefined;
    if (toolCallId === undefined) continue;
    if (event.type === "approval-request" && !answered.has(toolCallId)) {
      const expiresAt = Number(event["expiresAt"]);
      const requestedAt = typeof event["requestedAt"] === "number" ? event["requestedAt"] : expiresAt;
      waiting.set(toolCallId, { toolCallId, toolName: String(event["toolName"]), input: event["input"], requestedAt, expiresAt });
    } else if (event.type === "tool-result") waiting.delete(toolCallId);
  }
  // A call past its expiry with no answer recorded: the worker that asked died before its timeout denied it.
  const now = Date.now();
  return [...waiting.values()].filter((call) => call.expiresAt > now);
}
