import { randomBytes } from "node:crypto";
import { Hono, type Context as HonoContext } from "hono";
import { InMemorySessionStore, ReachPolicy, type ReachBudget, type RunState, type SessionStoreLike } from "rein";
import { policySecretSet } from "./policy-secret";
import { checkEntries, type Entries } from "./entries";
import { storeReads } from "./store-reads";
import { safeJson } from "./safe-json";
import { RequestError, STATUS_OF, bounded, errorBody, type ErrorType } from "./http-error";
import { SESSION_ID } from "./request-body";
import { STORE_UNAVAILABLE, fromStore, isStoreFault } from "./store-fault";
import { registerState, type ServerState } from "./server-state";
import { authenticate, type AuthOptions, type Caller } from "./auth/caller";
import { startKeyRun } from "./auth/key-spend";
import type { ApiKeyScope } from "./auth/api-key";
import { clientSessionId, flightFor, flightKey, ownsSession, sessionFor } from "./ownership";
import { runInFlight, startFlight } from "./flight";
import { mountLiveRoutes } from "./live-routes";
import type { BackgroundQueue } from "./background/background-queue";
import { mountRunRoute } from "./background/background-routes";
import { cancelBackgroundRun } from "./background/run-events-route";
import { mountBackgroundApprovalRoute } from "./background/background-approvals-route";
import { mountAgentRunRoute } from "./agent-run-route";
import { mountResumeRoute } from "./resume-route";
import { receivedBudget } from "./received-budget";
import { RUN_ID, type Admitted, type RouteKit } from "./route-kit";

export type { RunResponse } from "./agent-run-route";

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
  /**
   * The furthest ahead a received `X-Agent-Policy`'s expiry may lie, in ms
   * (`decodePolicyHeader`'s `maxTtlMs`): raise it for callers that encode
   * with a longer `ttlMs`. A header claiming to live longer is 400
   * `invalid_policy`, so a captured one cannot be replayed for longer.
   * @default 360_000 (the default ttlMs, 5 minutes, plus a minute of clock skew)
   */
  readonly maxPolicyTtlMs?: number;
}


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
  const maxTtlMs = options.maxPolicyTtlMs;
  if (maxTtlMs !== undefined && !(typeof maxTtlMs === "number" && Number.isFinite(maxTtlMs) && maxTtlMs > 0)) {
    throw new TypeError(`createServer({ maxPolicyTtlMs }): maxPolicyTtlMs must be a positive number of milliseconds, not ${String(maxTtlMs).slice(0, 40)}`);
  }
  const maxBodyBytes = options.maxBodyBytes ?? 1_048_576;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const report = options.onInternalError ?? reportToStderr;
  const state: ServerState = { runs: new Map(), store, ownsStore, closing: false, ending: new AbortController(), entries, reach: policy };
  const app = new Hono();
  registerState(app, state);

  const fail = (c: HonoContext, type: ErrorType, message: string) => {
    // The rest of an oversize body is never read: the connection closes after the answer.
    if (type === "body_too_large") c.header("connection", "close");
    return c.json(errorBody(type, message), STATUS_OF[type]);
  };
  const read = <R>(fn: () => R | Promise<R>) => fromStore(report, fn);
  // The read routes' reads, on the store's pool when it has one: a stalled database holds the request, not the server.
  const reads = storeReads(store);
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
  const badRunId = () => new RequestError("invalid_run_id", "X-Run-Id must be 8-128 characters of A-Z a-z 0-9 . _ : - and not name a run in flight or one paused waiting for an approval (or leave it out)");
  /** Puts a run in flight (flight.ts): its id claimed at once, then its key's run slot taken. */
  const fly = (caller: Caller, runId: string, conflict: () => RequestError = runInFlight(runId)) => startFlight(state, caller, runId, capped, report, conflict);

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
  const admit = (c: HonoContext, caller: Caller, work: string): Admitted => {
    const mint = options.mintRootBudget === true && (caller.mayMint || !policySecretSet());
    const { budget, callerRunId } = receivedBudget(c.req.header("x-agent-policy"), mint, policy, maxTtlMs);
    if (budget.depth === 0) throw new RequestError("reach_exceeded", `reach exceeded: X-Agent-Policy has depth 0 left; ${work} would use one level`);
    const proposed = c.req.header("x-run-id");
    if (proposed !== undefined && (!RUN_ID.test(proposed) || state.runs.has(flightKey(caller.owner, proposed)) || feed.approvals.isParked(caller.owner, proposed))) throw badRunId();
    return { budget, traceparent: c.req.header("traceparent"), runId: proposed ?? randomBytes(16).toString("hex"), caller: callerRunId === undefined ? {} : { callerRunId } };
  };

  app.get("/healthz", (c) => c.json({ status: state.closing ? "closing" : "ok", runs: state.runs.size }));
  // Approvals over HTTP, the runs feed and the Inspector page (live-routes.ts).
  // Before the in-process approvals route: a background run's answer goes to whichever process executes it.
  mountBackgroundApprovalRoute(app, { who, queue, read, maxBodyBytes });
  const feed = mountLiveRoutes(app, { who, store, maxBodyBytes, heartbeatMs, approvalTimeoutMs: options.approvalTimeoutMs, inspector: options.inspector, ending: state.ending.signal });

  const kit: RouteKit = { entries, store, policy, state, maxBodyBytes, heartbeatMs, queue, keys: options.auth?.keys, feed, report, who, fail, read, admit, capped, fly, badRunId };
  mountAgentRunRoute(app, kit);

  /** The stored session `id` names for `caller`, or a 404 (another key's session is not found either). */
  const sessionOf = async (caller: Caller, id: string): Promise<string> => {
    const stored = SESSION_ID.test(id) ? await read(() => sessionFor(caller, id, (candidate) => reads.hasSession(candidate))) : undefined;
    if (stored === undefined) throw new RequestError("not_found", `no session '${bounded(id)}'`);
    return stored;
  };

  app.get("/v1/sessions/:id", async (c) => {
    const caller = await who(c, "read");
    const stored = await sessionOf(caller, c.req.param("id"));
    const { session, nodes } = await read(async () => ({ session: await reads.getSession(stored), nodes: await reads.readNodes(stored) }));
    return c.json(JSON.parse(safeJson({ session: { ...session, id: clientSessionId(caller, session.id) }, nodes })) as object);
  });

  app.get("/v1/sessions/:id/graph", async (c) => {
    const caller = await who(c, "read");
    const stored = await sessionOf(caller, c.req.param("id"));
    const format = c.req.query("format") ?? "json";
    if (format !== "json" && format !== "mermaid" && format !== "dot") return fail(c, "invalid_body", `format must be mermaid, dot or json, not '${format.slice(0, 50)}'`);
    const graph = await read(() => reads.exportGraph(stored, format));
    return format === "json" ? c.body(graph, 200, { "content-type": "application/json" }) : c.text(graph);
  });

  app.get("/v1/runs", async (c) => {
    const caller = await who(c, "read");
    const asked = c.req.query("state");
    const states = asked === undefined || asked === "" ? undefined : asked.split(",");
    const unknown = states?.find((item) => !RUN_STATES.includes(item as RunState));
    if (unknown !== undefined) return fail(c, "invalid_body", `state must be a comma-separated list of ${RUN_STATES.join(", ")}; '${unknown.slice(0, 50)}' is not one`);
    const runs = await read(() => reads.listRuns(states as RunState[] | undefined));
    const visible = runs.filter((run) => ownsSession(caller, run.sessionId)).map((run) => ({ ...run, sessionId: clientSessionId(caller, run.sessionId) }));
    return c.json(JSON.parse(safeJson({ runs: visible })) as object);
  });

  mountResumeRoute(app, kit);

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
  mountRunRoute(app, { who, queue, store, read, ending: state.ending.signal });

  return app;
}

/** The default of `onInternalError`: one line on stderr, never sent to a client. */
function reportToStderr(error: unknown): void {
  const line = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  process.stderr.write(`rein server: ${line.split("\n")[0]}\n`);
}
