import type { Context as HonoContext, Hono } from "hono";
import type { SessionStoreLike } from "rein";
import type { ApiKeyScope } from "./auth/api-key";
import type { Caller } from "./auth/caller";
import { Approvals, approvalTimeoutOf } from "./approvals";
import { RunFeed, type RunFeedMessage } from "./run-feed";
import { RequestError, bounded } from "./http-error";
import { readJsonObject } from "./request-body";
import { safeJson as jsonOf } from "./safe-json";
import { mountInspector } from "./inspector/inspector-routes";
import { whenAnyAborted } from "./when-aborted";

/** What the live routes need of `createServer`. @internal */
export interface LiveRoutesOptions {
  readonly who: (c: HonoContext, scope: ApiKeyScope) => Promise<Caller>;
  readonly store: SessionStoreLike;
  readonly maxBodyBytes: number;
  readonly heartbeatMs: number;
  readonly approvalTimeoutMs: unknown;
  readonly inspector: unknown;
  /** The server's: aborted when it closes, ending the runs feed's streams. */
  readonly ending: AbortSignal;
}

/**
 * Mounts what watches and steers runs live: approvals over HTTP
 * (`GET /v1/runs/:id/approvals`, `POST /v1/runs/:id/approvals/:toolCallId`),
 * the runs feed (`GET /v1/runs/events`, SSE) and, with `inspector: true`,
 * the Inspector page at `/inspector`. Returns the feed the run route reports to.
 * @internal
 */
export function mountLiveRoutes(app: Hono, options: LiveRoutesOptions): RunFeed {
  if (options.inspector !== undefined && typeof options.inspector !== "boolean") {
    throw new TypeError(`createServer({ inspector }): inspector must be a boolean, not ${typeof options.inspector}`);
  }
  const approvals = new Approvals(approvalTimeoutOf(options.approvalTimeoutMs));
  const feed = new RunFeed(approvals);
  const { who } = options;

  app.get("/v1/runs/events", async (c) => {
    const caller = await who(c, "read");
    return sseResponse(c, options.heartbeatMs, options.ending, (send) => feed.subscribe(caller, send));
  });

  app.get("/v1/runs/:id/approvals", async (c) => {
    const caller = await who(c, "read");
    const id = c.req.param("id");
    const run = approvals.of(caller, id);
    if (run === undefined) throw new RequestError("not_found", `no run '${bounded(id)}' in flight or paused on an approval`);
    return c.json(JSON.parse(jsonOf({ runId: id, approvals: run.pending() })) as object);
  });

  app.post("/v1/runs/:id/approvals/:toolCallId", async (c) => {
    const caller = await who(c, "run");
    const id = c.req.param("id");
    const toolCallId = c.req.param("toolCallId");
    const body = await readJsonObject(c.req.raw, c.req.header("content-length"), options.maxBodyBytes, "{ approve: boolean }");
    for (const key of Object.keys(body)) {
      if (key !== "approve") throw new RequestError("invalid_body", `body.${bounded(key, 50)} is not a known field (approve)`);
    }
    if (typeof body["approve"] !== "boolean") throw new RequestError("invalid_body", "body.approve must be true or false: { approve: boolean }");
    // One home for an answer: a call of a run in flight, or a paused turn's (its resume ends before this answers).
    const { answer, resumed } = await approvals.answer(caller, id, toolCallId, body["approve"], c.req.raw.signal);
    if (answer === "no-such-run") throw new RequestError("not_found", `no run '${bounded(id)}' in flight or paused on an approval`);
    if (answer === "already-answered") throw new RequestError("run_conflict", `tool call '${bounded(toolCallId)}' of run ${bounded(id)} was already answered (or timed out, denied)`);
    if (answer !== "answered") throw new RequestError("not_found", `run ${bounded(id)} has no tool call '${bounded(toolCallId)}' waiting for approval (GET /v1/runs/${bounded(id)}/approvals lists them)`);
    if (resumed !== undefined) return c.body(jsonOf({ runId: id, toolCallId, approved: body["approve"], resumed }), 200, { "content-type": "application/json" });
    return c.json({ runId: id, toolCallId, approved: body["approve"] });
  });

  if (options.inspector === true) mountInspector(app, { store: options.store, who, readOnly: false });
  return feed;
}

/**
 * An SSE response fed by `subscribe` (which returns its unsubscribe): each
 * message as an event named after its `type`, heartbeat comments, and
 * nothing written after the client hangs up. Ends when `ending` aborts
 * (its server is closing).
 * @internal
 */
export function sseResponse(c: HonoContext, heartbeatMs: number, ending: AbortSignal, subscribe: (send: (message: RunFeedMessage) => void) => () => void): Response {
  const encoder = new TextEncoder();
  let stop = () => undefined as unknown;
  const stream = new ReadableStream<Uint8Array>({
    start(sink) {
      let open = true;
      const write = (text: string) => {
        if (!open) return;
        try {
          sink.enqueue(encoder.encode(text));
        } catch {
          stop();
        }
      };
      const heartbeat = setInterval(() => write(": heartbeat\n\n"), heartbeatMs);
      heartbeat.unref?.();
      const unsubscribe = subscribe((message) => write(`event: ${message.type}\ndata: ${jsonOf(message)}\n\n`));
      let unwatch = (): void => undefined;
      stop = () => {
        if (!open) return;
        open = false;
        clearInterval(heartbeat);
        unsubscribe();
        unwatch();
        try {
          sink.close();
        } catch {
          /* the client is gone */
        }
      };
      // The client hanging up, or the server closing; a signal already aborted stops it at once.
      unwatch = whenAnyAborted([c.req.raw.signal, ending], () => stop());
    },
    cancel() {
      stop();
    },
  });
  return new Response(stream, { status: 200, headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" } });
}

