import { randomBytes } from "node:crypto";
import { Hono, type Context as HonoContext } from "hono";
import {
  CancelledError,
  InMemorySessionStore,
  ProviderError,
  ReachError,
  ReachPolicy,
  clampBudget,
  inspectPolicyHeader,
  withReachBudget,
  withRunListener,
  RunNotResumableError,
  RunPausedError,
  type ReachBudget,
  type RunState,
  type RunEvent,
  type SessionStoreLike,
} from "rein";
import { policySecretSet } from "./policy-secret";
import { checkEntries, type Entries } from "./entries";
import { CANCELLED, callEntry } from "./call-entry";
import { agentForRun, entryClassFor, runsOf } from "./resume-runs";
import { safeJson } from "./safe-json";
import { RequestError, STATUS_OF, bounded, errorBody, type ErrorType } from "./http-error";
import { readJsonObject, readRunBody, SESSION_ID } from "./request-body";
import { STORE_UNAVAILABLE, fromStore, isStoreFault } from "./store-fault";
import { registerState, type ServerState } from "./server-state";
import { authenticate, type AuthOptions, type Caller } from "./auth/caller";
import { startKeyRun } from "./auth/key-spend";
import { SpendCapExceededError } from "./auth/spend-cap-error";
import type { ApiKeyScope } from "./auth/api-key";
import { clientSessionId, flightFor, flightKey, ownsSession, sessionFor, storedSessionId } from "./ownership";
import { mountLiveRoutes } from "./live-routes";
import type { ResumeEntry } from "./run-feed";
import type { BackgroundQueue } from "./background/background-queue";
import { NO_QUEUE, enqueueRun, mountRunRoute, prefersAsync } from "./background/background-routes";
import { cancelBackgroundRun } from "./background/run-events-route";
import { mountBackgroundApprovalRoute } from "./background/background-approvals-route";

/**
 * Options of {@link createServer}.
 * @example
 * ```ts
 * createServer({ entries: { research: [Researcher, "research"] }, store: new SessionStore(), reach: loadReachConfig() });
 * ```
 */
export interface CreateServerOptions {
  /** The callable entries by name; anything else is a 404. */
  readonly entries: Entries;
  /** Where runs are recorded; the server never closes a store it was given. @default a new InMemorySessionStore (closed by `close()`) */
  readonly store?: SessionStoreLike;
  /** The local policy every received budget is clamped to. @default new ReachPolicy() */
  readonly reach?: ReachPolicy;
  /**
   * Give a request without `X-Agent-Policy` a root budget (the local
   * policy's limits) instead of refusing it with 400: for a server whose
   * clients are its own users, not other agents. With a policy secret set
   * (`REIN_POLICY_SECRET`), only a caller authenticated with a key of the
   * `mint` or `admin` scope gets one: anyone else who drops the header gets
   * the 400, not a fresh root budget.
   * @default false
   */
  readonly mintRootBudget?: boolean;
  /**
   * API keys: every route but `GET /healthz` then needs `Authorization:
   * Bearer <key>` (401 `unauthorized` without a valid one, 403 `forbidden`
   * without the route's scope), and each key sees only the runs and
   * sessions it created (`admin` sees all). Without it the server is open
   * to anyone who can reach it.
   * @default undefined (no authentication)
   */
  readonly auth?: AuthOptions;
  /** Largest request body in bytes; larger is a 413. @default 1_048_576 */
  readonly maxBodyBytes?: number;
  /** Interval of SSE heartbeat comments in ms. @default 15_000 */
  readonly heartbeatMs?: number;
  /**
   * Receives what a client is never shown: a store fault behind a 503
   * `store_unavailable` (its message names files, hosts, ports), or an
   * unexpected error behind a 400.
   * @default one line on stderr: `rein server: <Name>: <message>`
   */
  readonly onInternalError?: (error: unknown) => void;
  /**
   * Mount the Inspector page at `/inspector`: runs live, their graphs,
   * reach gauges, Stop / Approve / Deny / Resume (docs/inspector.md).
   * @default false
   */
  readonly inspector?: boolean;
  /**
   * How long a tool call of a `requiresApproval` method (of an agent with no
   * `approveToolCall` of its own) waits for `POST
   * /v1/runs/:id/approvals/:toolCallId` before it is denied.
   * @default 300_000
   */
  readonly approvalTimeoutMs?: number;
  /**
   * The job queue of background runs: `POST /v1/agent/run` with `Prefer:
   * respond-async` then answers 202 `{ runId }` and puts the run on it, for
   * `rein worker` (or {@link startBackgroundWorker}) to execute, and `GET
   * /v1/runs/:id` reads it back from any instance. Needs a `store` shared
   * with the workers (a `PostgresSessionStore` on the queue's database).
   * Without it, `Prefer: respond-async` is a 501 `queue_not_configured`
   * (docs/background-runs.md).
   * @default undefined (runs happen in the request only)
   */
  readonly queue?: BackgroundQueue;
}

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

const RUN_ID = /^[A-Za-z0-9._:-]{8,128}$/;
const RUN_STATES: readonly RunState[] = ["running", "interrupted", "paused", "cancelled", "error", "completed"];

/**
 * A Hono app running the listed `entries` over HTTP: `POST /v1/agent/run`
 * (JSON or SSE), `GET /v1/sessions/:id`, `GET /v1/sessions/:id/graph`,
 * `POST /v1/runs/:id/cancel`, `GET /v1/runs`, `POST /v1/runs/:id/resume`
 * (resumable runs, by an agent of their class entry), `GET /healthz`. Every received
 * `X-Agent-Policy` is decoded, clamped to `reach`, and the run happens
 * inside {@link withReachBudget} with the request's `traceparent`
 * continued. Every header or body problem is a typed 4xx
 * `{ error: { type, message } }`, never a 500. Serve it with {@link serve}.
 * @example
 * ```ts
 * const app = createServer({ entries: { research: [Researcher, "research"] } });
 * const response = await app.request("/v1/agent/run", { method: "POST", headers: { "X-Agent-Policy": header }, body: JSON.stringify({ entry: "research", task: "x" }) });
 * ```
 */
export function createServer(options: CreateServerOptions): Hono {
  if (typeof options !== "object" || options === null) throw new TypeError("createServer(options): options must be an object with entries");
  checkEntries(options.entries);
  const entries = options.entries;
  const ownsStore = options.store === undefined;
  const store = options.store ?? new InMemorySessionStore();
  const policy = options.reach ?? new ReachPolicy();
  const maxBodyBytes = options.maxBodyBytes ?? 1_048_576;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const report = options.onInternalError ?? reportToStderr;
  const state: ServerState = { runs: new Map(), store, ownsStore, closing: false, entries, reach: policy };
  const app = new Hono();
  registerState(app, state);

  const fail = (c: HonoContext, type: ErrorType, message: string) => {
    // The rest of an oversize body is never read: the connection closes after the answer.
    if (type === "body_too_large") c.header("connection", "close");
    return c.json(errorBody(type, message), STATUS_OF[type]);
  };
  const read = <R>(fn: () => R | Promise<R>) => fromStore(report, fn);
  const queue = options.queue;
  if (queue !== undefined && (typeof queue !== "object" || queue === null || typeof queue.send !== "function" || typeof queue.get !== "function")) {
    throw new TypeError("createServer({ queue }): queue must be a BackgroundQueue (e.g. new PgBossQueue({ connectionString }))");
  }
  if (queue !== undefined && options.store === undefined) {
    throw new TypeError("createServer({ queue }): a queue needs the store its workers record into (e.g. store: new PostgresSessionStore({ connectionString })), not the default in-memory store");
  }
  if (options.auth !== undefined && (typeof options.auth !== "object" || options.auth === null || typeof options.auth.keys?.find !== "function")) {
    throw new TypeError("createServer({ auth }): auth must be { keys: ApiKeyStore } (an InMemoryApiKeyStore, SqliteApiKeyStore or PostgresApiKeyStore)");
  }
  /** The caller of `c`, allowed `scope` (401/403 otherwise); a key store that fails is a 503. */
  const who = async (c: HonoContext, scope: ApiKeyScope): Promise<Caller> => {
    try {
      return await authenticate(options.auth, c.req.header("authorization"), scope);
    } catch (error) {
      if (error instanceof RequestError) {
        if (error.type === "unauthorized") c.header("www-authenticate", 'Bearer realm="rein"');
        throw error;
      }
      report(error);
      throw new RequestError("store_unavailable", STORE_UNAVAILABLE);
    }
  };

  /** Starts a run of `caller` under its key's spend caps (a 429 over one); a key store that fails is a 503. */
  const capped = (caller: Caller) => startKeyRun(options.auth?.keys, caller, report);

  app.onError((error, c) => {
    if (error instanceof RequestError) {
      if (error.retryAfterSeconds !== undefined) c.header("retry-after", String(error.retryAfterSeconds));
      return fail(c, error.type, error.message);
    }
    report(error);
    // Never the error's own message: it may name the database, or echo the request.
    if (isStoreFault(error)) return fail(c, "store_unavailable", STORE_UNAVAILABLE);
    return fail(c, "invalid_body", "the request could not be handled");
  });
  app.notFound((c) => fail(c, "not_found", `no route ${bounded(c.req.method, 16)} ${bounded(c.req.path)}`));

  /**
   * What every request that starts work needs: the received budget (clamped;
   * depth 0 left is a 403), the `traceparent` to continue, and the run id —
   * the client's `X-Run-Id` (so it can cancel before the answer arrives) or
   * a new one. A bad header is a typed 4xx through `app.onError`.
   */
  const admit = (c: HonoContext, caller: Caller, work: string): { budget: ReachBudget; traceparent: string | undefined; runId: string; caller: { callerRunId?: string } } => {
    const mint = options.mintRootBudget === true && (caller.mayMint || !policySecretSet());
    const { budget, callerRunId } = receivedBudget(c.req.header("x-agent-policy"), mint, policy);
    if (budget.depth === 0) throw new RequestError("reach_exceeded", `reach exceeded: X-Agent-Policy has depth 0 left; ${work} would use one level`);
    const proposed = c.req.header("x-run-id");
    if (proposed !== undefined && (!RUN_ID.test(proposed) || state.runs.has(flightKey(caller.owner, proposed)))) {
      throw new RequestError("invalid_run_id", "X-Run-Id must be 8-128 characters of A-Z a-z 0-9 . _ : - and not name a run in flight (or leave it out)");
    }
    return { budget, traceparent: c.req.header("traceparent"), runId: proposed ?? randomBytes(16).toString("hex"), caller: callerRunId === undefined ? {} : { callerRunId } };
  };

  app.get("/healthz", (c) => c.json({ status: state.closing ? "closing" : "ok", runs: state.runs.size }));
  // Approvals over HTTP, the runs feed and the Inspector page (live-routes.ts).
  // Before the in-process approvals route: a background run's answer goes to whichever process executes it.
  mountBackgroundApprovalRoute(app, { who, queue, read, maxBodyBytes });
  const feed = mountLiveRoutes(app, { who, store, maxBodyBytes, heartbeatMs, approvalTimeoutMs: options.approvalTimeoutMs, inspector: options.inspector });

  app.post("/v1/agent/run", async (c) => {
    const caller = await who(c, "run");
    if (state.closing) return fail(c, "shutting_down", "the server is shutting down; retry on another instance");
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
      const queuedId = await enqueueRun(queue, report, args, options.auth?.keys);
      c.header("X-Run-Id", queuedId);
      c.header("Location", `/v1/runs/${queuedId}`);
      c.header("Preference-Applied", "respond-async");
      return c.json({ runId: queuedId }, 202);
    }
    const { budget, traceparent, runId, caller: issuer } = admit(c, caller, "this entry");
    // The client's name of the session; the store holds it under the caller's prefix (ownership.ts).
    const sessionId = body.sessionId ?? `run-${runId}`;
    const storedId = storedSessionId(caller, sessionId);
    // A capped key: a run slot and this minute's count taken now (429 over a cap), each model request reserved in the key store.
    const keyRun = await capped(caller);
    const controller = new AbortController();
    const inFlight = flightKey(caller.owner, runId);
    state.runs.set(inFlight, controller);
    // A client that hangs up (JSON or SSE) no longer wants the run: cancel it, and with it the provider's request.
    const hangUp = onHangUp(c, controller);
    // A turn the entry returns paused on an approval is answered on the approvals route, which resumes it here, in flight again.
    const resume: ResumeEntry = ({ continuation, approve, controller: again, onEvent: listener, approveToolCall }) => {
      state.runs.set(inFlight, again);
      const resumption = { continuation, approve };
      return callEntry({ entry, entryName: body.entry, args: [], store, storedSessionId: storedId, runId, budget, policy, ...(traceparent === undefined ? {} : { traceparent }), signal: again.signal, onEvent: listener, approveToolCall, resume: resumption, ...(keyRun?.spend === undefined ? {} : { spend: keyRun.spend }) }).finally(() => state.runs.delete(inFlight));
    };
    const watched = feed.watch({ owner: caller.owner, runId, entry: body.entry, storedSessionId: storedId, budget, signal: controller.signal, emit: (event) => forward?.(event as unknown as RunEvent), resume });
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
        const base = { runId, ...usageOf(), sessionId, ...headOf(store, storedId), budget, ...issuer };
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
          ...headOf(store, storedId),
          budget,
          ...issuer,
          error: { type, name: err.name, message: type === "store_unavailable" ? STORE_UNAVAILABLE : err.message },
        };
        return type === "run_error" ? { response } : { response, errorType: type };
      } finally {
        hangUp();
        state.runs.delete(inFlight);
        void keyRun?.end().catch(report);
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

  /** The stored session `id` names for `caller`, or a 404 (another key's session is not found either). */
  const sessionOf = async (caller: Caller, id: string): Promise<string> => {
    const stored = SESSION_ID.test(id) ? await read(() => sessionFor(caller, id, (candidate) => store.hasSession(candidate))) : undefined;
    if (stored === undefined) throw new RequestError("not_found", `no session '${bounded(id)}'`);
    return stored;
  };

  app.get("/v1/sessions/:id", async (c) => {
    const caller = await who(c, "read");
    const stored = await sessionOf(caller, c.req.param("id"));
    const { session, nodes } = await read(() => ({ session: store.getSession(stored), nodes: store.readNodes(stored) }));
    return c.json(JSON.parse(safeJson({ session: { ...session, id: clientSessionId(caller, session.id) }, nodes })) as object);
  });

  app.get("/v1/sessions/:id/graph", async (c) => {
    const caller = await who(c, "read");
    const stored = await sessionOf(caller, c.req.param("id"));
    const format = c.req.query("format") ?? "json";
    if (format !== "json" && format !== "mermaid" && format !== "dot") return fail(c, "invalid_body", `format must be mermaid, dot or json, not '${format.slice(0, 50)}'`);
    const graph = await read(() => store.exportGraph(stored, { format }));
    return format === "json" ? c.body(graph, 200, { "content-type": "application/json" }) : c.text(graph);
  });

  app.get("/v1/runs", async (c) => {
    const caller = await who(c, "read");
    const asked = c.req.query("state");
    const states = asked === undefined || asked === "" ? undefined : asked.split(",");
    const unknown = states?.find((item) => !RUN_STATES.includes(item as RunState));
    if (unknown !== undefined) return fail(c, "invalid_body", `state must be a comma-separated list of ${RUN_STATES.join(", ")}; '${unknown.slice(0, 50)}' is not one`);
    const runs = await read(() => runsOf(store)?.listRuns(states as RunState[] | undefined) ?? []);
    const visible = runs.filter((run) => ownsSession(caller, run.sessionId)).map((run) => ({ ...run, sessionId: clientSessionId(caller, run.sessionId) }));
    return c.json(JSON.parse(safeJson({ runs: visible })) as object);
  });

  app.post("/v1/runs/:id/resume", async (c) => {
    const caller = await who(c, "run");
    if (state.closing) return fail(c, "shutting_down", "the server is shutting down; retry on another instance");
    const id = c.req.param("id");
    const body = await readJsonObject(c.req.raw, c.req.header("content-length"), maxBodyBytes, '{ codeChangePolicy?: "keep_original" | "use_latest" }', {});
    for (const key of Object.keys(body)) {
      if (key !== "codeChangePolicy") return fail(c, "invalid_body", `body.${key.slice(0, 50)} is not a known field (codeChangePolicy)`);
    }
    const policyName = body["codeChangePolicy"];
    if (policyName !== undefined && policyName !== "keep_original" && policyName !== "use_latest") {
      return fail(c, "invalid_body", 'body.codeChangePolicy must be "keep_original" or "use_latest"');
    }
    const found = RUN_ID.test(id) ? await read(() => runsOf(store)?.getRun(id)) : undefined;
    // Another key's run is not found either.
    const record = found !== undefined && ownsSession(caller, found.sessionId) ? found : undefined;
    if (record === undefined) return fail(c, "not_found", `no resumable run '${bounded(id)}' in this server's store (GET /v1/runs lists them)`);
    const entry = entryClassFor(entries, record.name);
    if (entry === undefined) return fail(c, "not_found", `run ${id} is a run of ${bounded(record.name, 200)}, which no listed class entry of this server serves`);
    const { budget, traceparent, runId: requestId } = admit(c, caller, "resuming the run");
    const keyRun = await capped(caller);
    const controller = new AbortController();
    const inFlight = flightKey(caller.owner, requestId);
    state.runs.set(inFlight, controller);
    const hangUp = onHangUp(c, controller);
    c.header("X-Run-Id", requestId);
    const base = { runId: id, sessionId: clientSessionId(caller, record.sessionId), budget };
    try {
      const agent = agentForRun(entry, store, record, policy);
      const resume = () => agent.resumeRun(id, policyName === undefined ? {} : { codeChangePolicy: policyName });
      const result = await withRunListener(
        () => undefined,
        () => withReachBudget(budget, resume, { policy, ...(traceparent === undefined ? {} : { traceparent }) }),
        { signal: controller.signal, ...(keyRun?.spend === undefined ? {} : { spend: keyRun.spend }) },
      );
      return c.json(JSON.parse(safeJson({ ...base, result: result ?? null, status: "completed", ...headOf(store, record.sessionId) })) as object);
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
      return c.json(JSON.parse(safeJson({ ...base, result: null, status, ...headOf(store, record.sessionId), error: { type, name: err.name, message } })) as object, httpStatus);
    } finally {
      hangUp();
      state.runs.delete(inFlight);
      void keyRun?.end().catch(report);
    }
  });

  app.post("/v1/runs/:id/cancel", async (c) => {
    const caller = await who(c, "run");
    const id = c.req.param("id");
    const controller = flightFor(state.runs, caller, id);
    // Not in flight here: a background run, executing in whichever process (the queue's channel reaches it).
    const background = controller === undefined && queue !== undefined ? await read(() => cancelBackgroundRun(queue, caller, id)) : undefined;
    if (background !== undefined) return c.json({ runId: id, status: background });
    if (controller === undefined) return fail(c, "not_found", `no run '${bounded(id)}' in flight`);
    controller.abort(new Error(`run ${id} cancelled by request`));
    return c.json({ runId: id, status: "cancelling" });
  });

  // After GET /v1/runs/events (live-routes.ts), which this pattern would otherwise match.
  mountRunRoute(app, { who, queue, store, read });

  return app;
}

/** @internal The error type of a failed run: a key's spend cap (429), a reach refusal (403), a provider failure (502), a store fault (503), or anything else (200 with the error). */
export function errorTypeOf(error: Error): "budget_exhausted" | "reach_exceeded" | "provider_error" | "store_unavailable" | "run_error" {
  if (SpendCapExceededError.isInstance(error)) return "budget_exhausted";
  if (ReachError.isInstance(error)) return "reach_exceeded";
  if (ProviderError.isInstance(error)) return "provider_error";
  return isStoreFault(error) ? "store_unavailable" : "run_error";
}

/**
 * Cancels `controller` when the client of `c` hangs up before its answer
 * (`@hono/node-server` aborts the request's signal when the connection
 * closes first); returns the function that stops listening.
 */
function onHangUp(c: HonoContext, controller: AbortController): () => void {
  const signal = c.req.raw.signal;
  const cancel = () => controller.abort(new CancelledError("the client disconnected"));
  if (signal.aborted) cancel();
  signal.addEventListener("abort", cancel, { once: true });
  return () => signal.removeEventListener("abort", cancel);
}

/** The default of `onInternalError`: one line on stderr, never sent to a client. */
function reportToStderr(error: unknown): void {
  const line = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  process.stderr.write(`rein server: ${line.split("\n")[0]}\n`);
}

/** @internal The stored session's head node, when the store can say. */
export function headOf(store: SessionStoreLike, sessionId: string): { headId?: string } {
  try {
    const head = store.head(sessionId);
    return head === null ? {} : { headId: head };
  } catch {
    return {};
  }
}


function receivedBudget(header: string | undefined, mint: boolean, policy: ReachPolicy): { budget: ReachBudget; callerRunId?: string } {
  if (header === undefined || header === "") {
    if (mint) return { budget: clampBudget({ depth: Infinity }, policy.limits) };
    throw new RequestError("missing_policy", "X-Agent-Policy header is required (a caller passes its budget on with reachFetch; or start the server with mintRootBudget)");
  }
  try {
    // An expired, forged or unsigned (with a secret set) header is refused here: 400 invalid_policy.
    const { budget, runId } = inspectPolicyHeader(header);
    return { budget: clampBudget(budget, policy.limits), ...(runId === undefined ? {} : { callerRunId: runId }) };
  } catch (error) {
    throw new RequestError("invalid_policy", `X-Agent-Policy is not valid: ${(error as Error).message}`);
  }
}
