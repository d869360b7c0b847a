import type { Hono } from "hono";
import { CancelledError, type ReachBudget, type RunEvent } from "rein";
import { SpendCapExceededError } from "./auth/spend-cap-error";
import { NO_QUEUE, enqueueRun, prefersAsync } from "./background/background-routes";
import { CANCELLED, callEntry } from "./call-entry";
import { STATUS_OF, bounded, type ErrorType } from "./http-error";
import { storedSessionId } from "./ownership";
import { followQueued } from "./background/follow-queued";
import { readRunBody } from "./request-body";
import type { RouteKit } from "./route-kit";
import type { ResumeEntry } from "./run-feed";
import { errorTypeOf, headOf, onHangUp } from "./run-outcome";
import { safeJson } from "./safe-json";
import { STORE_UNAVAILABLE } from "./store-fault";
import { shuttingDown } from "./flight";

/**
 * The JSON answer of `POST /v1/agent/run`: the entry's return value, how the
 * run ended, tokens summed over its model responses (absent when the entry
 * made no model request), the
 * session it was recorded in and its head, and the budget this hop received
 * (after clamping to the local policy; `depth: null` = unlimited).
 * @example
 * ```ts
 * const { result, status, budget } = (await response.json()) as RunResponse;
 * ```
 */
export interface RunResponse {
  readonly runId: string;
  readonly result: unknown;
  readonly status: "completed" | "error" | "cancelled";
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number };
  readonly sessionId?: string;
  readonly headId?: string;
  readonly budget: ReachBudget;
  readonly error?: { readonly type: string; readonly name: string; readonly message: string };
  /** The caller's run that issued the received `X-Agent-Policy` (its `r`), when a signed header said. */
  readonly callerRunId?: string;
}

/**
 * Mounts `POST /v1/agent/run`: a run of a listed entry, answered as JSON or
 * as an SSE stream of its events, or queued (`Prefer: respond-async`, 202).
 * A client that hangs up cancels its run; a capped key's run is held to
 * its spend caps; a turn paused on an approval waits on the approvals route.
 * @internal
 */
export function mountAgentRunRoute(app: Hono, kit: RouteKit): void {
  const { entries, store, policy, state, maxBodyBytes, heartbeatMs, queue, keys, feed, report, who, fail, admit, fly, badRunId } = kit;
  app.post("/v1/agent/run", async (c) => {
    const caller = await who(c, "run");
    // Checked first, before the body is read; every run start checks it again (flight.ts).
    if (state.closing) throw shuttingDown();
    const body = await readRunBody(c.req.raw, c.req.header("content-length"), maxBodyBytes);
    const entry = entries[body.entry];
    if (entry === undefined || !Object.prototype.hasOwnProperty.call(entries, body.entry)) {
      return fail(c, "not_found", `no entry '${bounded(body.entry)}'; listed entries: ${bounded(Object.keys(entries).join(", "), 400)}`);
    }
    if (prefersAsync(c.req.header("prefer"))) {
      if (queue === undefined) return fail(c, "queue_not_configured", NO_QUEUE);
      if (c.req.header("x-run-id") !== undefined) return fail(c, "invalid_run_id", "a background run (Prefer: respond-async) gets its id from the server: leave X-Run-Id out");
      const admitted = admit(c, caller, "this entry");
      const args = { caller, entry: body.entry, args: body.args, sessionId: body.sessionId, budget: admitted.budget, traceparent: admitted.traceparent, ...admitted.caller };
      const { runId: queuedId, storedSessionId: queuedSession } = await enqueueRun(queue, report, args, keys);
      // Listed in this server's runs feed (and the Inspector) as it runs on a worker: its log, read from the channel.
      if (queue.channel !== undefined) {
        const track = () => feed.track({ owner: caller.owner, runId: queuedId, entry: body.entry, storedSessionId: queuedSession, budget: admitted.budget });
        followQueued({ channel: queue.channel, queue, runId: queuedId, track, report, closing: () => state.closing });
      }
      c.header("X-Run-Id", queuedId);
      c.header("Location", `/v1/runs/${queuedId}`);
      c.header("Preference-Applied", "respond-async");
      return c.json({ runId: queuedId }, 202);
    }
    const { budget, traceparent, runId, caller: issuer } = admit(c, caller, "this entry");
    // The client's name of the session; the store holds it under the caller's prefix (ownership.ts).
    const sessionId = body.sessionId ?? `run-${runId}`;
    const storedId = storedSessionId(caller, sessionId);
    // In flight (the id claimed in the tick admit checked it), then a capped key's run slot and this minute's count
    // (429 over a cap); each model request is reserved in the key store.
    const flight = await fly(caller, runId, badRunId);
    const { controller, keyRun } = flight;
    // A client that hangs up (JSON or SSE) no longer wants the run: cancel it, and with it the provider's request.
    const hangUp = onHangUp(c, controller);
    // A turn the entry returns paused on an approval is answered on the approvals route, which resumes it here: in
    // flight again under the same id, in a run slot of the key's own (taken before the answer counts).
    const admitResume = () => fly(caller, runId);
    const resume: ResumeEntry = ({ continuation, approve, flight: again, onEvent: listener, approveToolCall }) => {
      const resumption = { continuation, approve };
      const spend = again.keyRun?.spend;
      return callEntry({ entry, entryName: body.entry, args: [], store, storedSessionId: storedId, runId, budget, policy, ...(traceparent === undefined ? {} : { traceparent }), signal: again.controller.signal, onEvent: listener, approveToolCall, resume: resumption, ...(spend === undefined ? {} : { spend }) }).finally(() => again.land());
    };
    const watched = feed.watch({ owner: caller.owner, runId, entry: body.entry, storedSessionId: storedId, budget, signal: controller.signal, emit: (event) => forward?.(event as unknown as RunEvent), resume, admitResume });
    const usage = { inputTokens: 0, outputTokens: 0 };
    // Usage is summed from the run's model responses (observed: the entry made at least one run).
    let observed = false;
    let forward: ((event: RunEvent) => void) | undefined;
    const onEvent = (event: RunEvent) => {
      observed = true;
      watched.event(event);
      if (event.type === "model-response") {
        usage.inputTokens += event.usage.inputTokens;
        usage.outputTokens += event.usage.outputTokens;
      }
      forward?.(event);
    };
    const usageOf = () => (observed ? { usage: { ...usage } } : {});
    const runEntry = async (): Promise<{ response: RunResponse; errorType?: ErrorType }> => {
      try {
        const value = await callEntry({
          entry,
          entryName: body.entry,
          args: body.args,
          store,
          storedSessionId: storedId,
          runId,
          budget,
          policy,
          ...(traceparent === undefined ? {} : { traceparent }),
          signal: controller.signal,
          onEvent,
          approveToolCall: watched.approver,
          ...(keyRun?.spend === undefined ? {} : { spend: keyRun.spend }),
        });
        const base = { runId, ...usageOf(), sessionId, ...(await headOf(store, storedId)), budget, ...issuer };
        if (value === CANCELLED) return { response: { ...base, result: null, status: "cancelled" } };
        return { response: { ...base, result: value ?? null, status: "completed" } };
      } catch (error) {
        const err = error instanceof Error ? error : new Error(String(error));
        const type = errorTypeOf(err);
        if (type === "store_unavailable") report(err);
        if (SpendCapExceededError.isInstance(err)) c.header("retry-after", String(err.retryAfterSeconds));
        const response: RunResponse = {
          runId,
          result: null,
          status: "error",
          ...usageOf(),
          sessionId,
          ...(await headOf(store, storedId)),
          budget,
          ...issuer,
          error: { type, name: err.name, message: type === "store_unavailable" ? STORE_UNAVAILABLE : err.message },
        };
        return type === "run_error" ? { response } : { response, errorType: type };
      } finally {
        hangUp();
        flight.land();
      }
    };

    const run = () => watched.settle(runEntry());
    c.header("X-Run-Id", runId);
    if ((c.req.header("accept") ?? "").includes("text/event-stream")) {
      const encoder = new TextEncoder();
      // Once the client hangs up the stream is cancelled: nothing may be written or closed after that
      // (a close() on a cancelled stream throws "Controller is already closed" and took the process down).
      let open = true;
      const stream = new ReadableStream<Uint8Array>({
        start(sink) {
          const write = (text: string) => {
            if (!open) return;
            try {
              sink.enqueue(encoder.encode(text));
            } catch {
              open = false;
            }
          };
          const end = () => {
            if (!open) return;
            open = false;
            try {
              sink.close();
            } catch {
              /* cancelled meanwhile */
            }
          };
          forward = (event) => write(`data: ${safeJson(event)}\n\n`);
          const heartbeat = setInterval(() => write(`: heartbeat\n\n`), heartbeatMs);
          heartbeat.unref?.();
          void run()
            .then(({ response }) => write(`event: run-finish\ndata: ${safeJson(response)}\n\n`))
            .catch((error: unknown) => report(error))
            .finally(() => {
              clearInterval(heartbeat);
              end();
            });
        },
        cancel() {
          open = false;
          forward = undefined;
          controller.abort(new CancelledError("the client disconnected"));
        },
      });
      return new Response(stream, {
        status: 200,
        headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-run-id": runId },
      });
    }
    const { response, errorType } = await run();
    // The client is gone: no one to answer (the run was cancelled when it hung up).
    if (c.req.raw.signal.aborted) return new Response(null, { status: 204 });
    return c.json(JSON.parse(safeJson(response)) as RunResponse, errorType === undefined ? 200 : STATUS_OF[errorType]);
  });
}
