import type { Context as HonoContext, Hono } from "hono";
import type { ApiKeyScope } from "../auth/api-key";
import type { Caller } from "../auth/caller";
import { RequestError, bounded } from "../http-error";
import { safeJson } from "../safe-json";
import type { BackgroundQueue, BackgroundRunRecord } from "./background-queue";
import type { RunChannel, StoredRunEvent } from "./run-channel";
import { whenAnyAborted } from "../when-aborted";

/** How often a follower with nothing new checks the queue (a run that died out of retries writes no closing event). */
const POLL_MS = 2_000;
/** An SSE comment this often keeps proxies from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;
const ENDED = new Set(["completed", "error", "cancelled"]);

/**
 * @internal `GET /v1/runs/:id/events`: a background run's events as SSE,
 * from any instance — first those recorded so far (from the start, or after
 * the `Last-Event-ID` the client saw), then live ones as the worker
 * executing the run records them (woken by `NOTIFY`), each with its `id:`
 * (the run's event sequence), until the closing `event: run-end` (or its
 * server closes: the stream ends, and the client reconnects with
 * `Last-Event-ID`). Another
 * key's run is a 404; a server whose queue has no channel answers 501.
 */
export function mountRunEventsRoute(
  app: Hono,
  options: {
    who: (c: HonoContext, scope: ApiKeyScope) => Promise<Caller>;
    queue: BackgroundQueue | undefined;
    read: <R>(fn: () => R | Promise<R>) => Promise<R>;
    /** The server's: aborted when it closes, ending the stream (a client reconnects with `Last-Event-ID`). */
    ending: AbortSignal;
  },
): void {
  const { who, queue, read } = options;
  app.get("/v1/runs/:id/events", async (c) => {
    const caller = await who(c, "read");
    const id = c.req.param("id");
    const channel = queue?.channel;
    if (queue === undefined || channel === undefined) {
      throw new RequestError("queue_not_configured", "a run's recorded events need a queue with a run channel: createServer({ queue: new PgBossQueue({ connectionString }) })");
    }
    const record = await read(() => queue.get(id));
    if (record === undefined || !(caller.seesAll || record.job.owner === caller.owner)) {
      throw new RequestError("not_found", `no background run '${bounded(id)}' (only runs queued with Prefer: respond-async have recorded events)`);
    }
    const header = c.req.header("last-event-id");
    if (header !== undefined && !/^\d{1,9}$/.test(header.trim())) {
      throw new RequestError("invalid_body", `Last-Event-ID must be the id of an event this stream sent (a whole number), got '${bounded(header)}'`);
    }
    const after = header === undefined ? 0 : Number(header.trim());
    return followRun(c, channel, () => read(() => queue.get(id)), id, after, options.ending);
  });
}

/**
 * The SSE stream of one run: replay after `after`, then follow until
 * `run-end` (or the queue says it ended). One batch of events is one chunk,
 * and the next batch is read only once the client has taken the last (the
 * stream's `pull`): a client that reads nothing holds at most a batch or
 * two of a long run's log in this server, not all of it.
 */
function followRun(c: HonoContext, channel: RunChannel, state: () => Promise<BackgroundRunRecord | undefined>, runId: string, after: number, ending: AbortSignal): Response {
  const encoder = new TextEncoder();
  let stop = (): void => undefined;
  let pulled: (() => void) | undefined;
  const stream = new ReadableStream<Uint8Array>({
    start(sink) {
      let open = true;
      let last = after;
      let wake: (() => void) | undefined;
      /** Resolves when the client has room for more (or the stream stopped). */
      const room = () =>
        new Promise<void>((resolve) => {
          if (!open || (sink.desiredSize ?? 1) > 0) return resolve();
          pulled = resolve;
        });
      const write = (text: string) => {
        if (!open) return;
        try {
          sink.enqueue(encoder.encode(text));
        } catch {
          stop();
        }
      };
      /** Sends a batch as one chunk; true when it held the closing event. */
      const send = (batch: readonly StoredRunEvent[]) => {
        let text = "";
        let ended = false;
        for (const { seq, event } of batch) {
          last = seq;
          text += `id: ${seq}\n${event.type === "run-end" ? "event: run-end\n" : ""}data: ${safeJson(event)}\n\n`;
          if ((ended = event.type === "run-end")) break;
        }
        if (text !== "") write(text);
        return ended;
      };
      // Subscribed before the first read: an event recorded in between still wakes it.
      const unfollow = channel.follow(runId, () => wake?.());
      const heartbeat = setInterval(() => write(": heartbeat\n\n"), HEARTBEAT_MS);
      heartbeat.unref?.();
      let unwatch = (): void => undefined;
      stop = () => {
        if (!open) return;
        open = false;
        clearInterval(heartbeat);
        unfollow();
        unwatch();
        wake?.();
        pulled?.();
        try {
          sink.close();
        } catch {
          /* the client is gone */
        }
      };
      // The client hanging up, or the server closing (the run goes on: a client reconnects with Last-Event-ID).
      unwatch = whenAnyAborted([c.req.raw.signal, ending], () => stop());
      void (async () => {
        let woken = true;
        while (open) {
          if (!woken) {
            const timedOut = await new Promise<boolean>((resolve) => {
              const timer = setTimeout(() => resolve(true), POLL_MS);
              wake = () => (clearTimeout(timer), resolve(false));
            });
            wake = undefined;
            if (timedOut) {
              const now = await state().catch(() => undefined);
              if (now !== undefined && ENDED.has(now.state)) {
                // Ended without a closing event in its log (out of retries, or never taken): read what is left, then say how it ended.
                for (;;) {
                  await room();
                  const rest = await channel.read(runId, last);
                  if (send(rest)) return stop();
                  if (rest.length < 500 || !open) break;
                }
                write(`event: run-end\ndata: ${safeJson({ type: "run-end", status: now.state, result: now.outcome?.result ?? null, ...(now.outcome?.error === undefined ? {} : { error: now.outcome.error }) })}\n\n`);
                return stop();
              }
            }
          }
          woken = false;
          for (;;) {
            await room();
            if (!open) return;
            const batch = await channel.read(runId, last);
            if (send(batch)) return stop();
            if (batch.length < 500) break;
          }
        }
      })().catch(() => stop());
    },
    pull() {
      pulled?.();
      pulled = undefined;
    },
    cancel() {
      stop();
    },
  });
  return new Response(stream, { status: 200, headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no", "x-run-id": runId } });
}

/**
 * @internal `POST /v1/runs/:id/cancel` for a background run, from any
 * instance: the request is recorded and sent on the queue's channel, and
 * the worker executing the run (in whichever process) aborts it, or a
 * worker that takes it later ends it `cancelled` at once. Resolves with the
 * answer's status (`cancelling`, or the state of a run that already ended),
 * or `undefined` when the caller has no background run of that id.
 */
export async function cancelBackgroundRun(queue: BackgroundQueue, caller: Caller, runId: string): Promise<string | undefined> {
  const channel = queue.channel;
  if (channel === undefined) return undefined;
  const record = await queue.get(runId);
  if (record === undefined || !(caller.seesAll || record.job.owner === caller.owner)) return undefined;
  if (ENDED.has(record.state)) return record.state;
  await channel.control({ runId, action: "cancel" });
  return "cancelling";
}
