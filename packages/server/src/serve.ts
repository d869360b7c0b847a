import type { Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { serve as nodeServe } from "@hono/node-server";
import type { Hono } from "hono";
import { InterruptedError, withRunListener, type ResumeInterruptedReport } from "rein";
import { policySecretSet } from "./policy-secret";
import { resumeOnStart } from "./resume-runs";
import type { ServerState } from "./server-state";
import { createServer, type CreateServerOptions } from "./create-server";
import { lingerOnClose } from "./lingering-close";
import { stateOf } from "./server-state";
import { INTERNAL_OWNER, flightKey } from "./ownership";

/**
 * Where and how long to listen: the part of {@link ServeOptions} shared by
 * its two forms.
 */
export interface ListenOptions {
  /** @default 0 (a free port) */
  readonly port?: number;
  /** @default "127.0.0.1" */
  readonly hostname?: string;
  /** How long `close()` lets runs in flight finish before cancelling them. @default 10_000 */
  readonly graceMs?: number;
  /**
   * Once listening, continue the resumable runs of the store that a restart
   * or crash interrupted less than 2 hours ago (those of a listed class
   * entry); see {@link RunningServer.resumed}.
   * @default true
   */
  readonly resumeInterrupted?: boolean;
  /**
   * How long a client has to send a request's headers from the moment it
   * connects (or from the end of its previous request); then the server
   * answers 408 and closes the connection.
   * @default 10_000
   */
  readonly headersTimeoutMs?: number;
  /**
   * How long a client has, after the headers' time, to send the body: the
   * whole request must arrive within `headersTimeoutMs + bodyTimeoutMs`
   * (Node's `requestTimeout`), else 408 and the connection is closed. It
   * bounds receiving only: a long run's answer is not cut.
   * @default 30_000
   */
  readonly bodyTimeoutMs?: number;
  /** How long a kept-alive connection may sit idle between requests before it is closed. @default 5_000 */
  readonly idleTimeoutMs?: number;
  /** The most connections open at once; one more is closed as soon as it is accepted. @default 1_024 */
  readonly maxConnections?: number;
  /**
   * Receives the start-up warnings: one when `REIN_POLICY_SECRET` is not
   * set (received budgets are then unsigned: any caller can claim any
   * budget up to the local policy).
   * @default process.emitWarning
   */
  readonly warn?: (message: string) => void;
}

/**
 * Options of {@link serve}: an app made by `createServer`, or the options
 * of `createServer` themselves (`serve({ entries, port })`), with where to
 * listen.
 * @example
 * ```ts
 * await serve({ entries: { research: [Researcher, "research"] }, port: 8080 });
 * await serve({ app: createServer({ entries, store }), port: 8080, graceMs: 10_000 });
 * ```
 */
export type ServeOptions = ListenOptions & ({ readonly app: Hono } | (CreateServerOptions & { readonly app?: undefined }));

/**
 * A listening server: its address and a graceful `close()`.
 * @example
 * ```ts
 * const server = await serve({ app });
 * await fetch(`${server.url}/healthz`);
 * await server.close();
 * ```
 */
export interface RunningServer {
  readonly port: number;
  readonly hostname: string;
  /** `http://hostname:port` */
  readonly url: string;
  /**
   * The runs continued when the server started (they run while it serves;
   * `close()` cancels those still going after the grace period) and those
   * left for `POST /v1/runs/:id/resume`, with the reason. Never rejects:
   * when the store could not be read, `error` says why.
   */
  readonly resumed: Promise<ResumeInterruptedReport & { readonly error?: Error }>;
  /**
   * Stops accepting connections (new runs get 503), waits up to `graceMs`
   * for runs in flight, cancels the rest, marks the store's running nodes
   * `interrupted`, flushes it, ends the event streams that only watch (the
   * runs feed, a background run's events), closes each connection once it
   * is idle (every one after another `graceMs`), and closes only what the
   * server opened (its default in-memory store).
   */
  close(): Promise<void>;
}

/**
 * Listens with `@hono/node-server` and resolves once the port is bound.
 * @example
 * ```ts
 * const server = await serve({ entries, port: 8080 });
 * process.on("SIGTERM", () => void server.close());
 * ```
 */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  // Refused options reject (this is an async API): an unknown shape, or entries createServer refuses.
  if (typeof options !== "object" || options === null) throw new TypeError("serve(options): expected { app } or { entries }, with an optional port");
  const app = options.app ?? createServer(options as CreateServerOptions);
  return listen(app, options);
}

function listen(app: Hono, options: ListenOptions): Promise<RunningServer> {
  const hostname = options.hostname ?? "127.0.0.1";
  const graceMs = options.graceMs ?? 10_000;
  const limits = connectionLimits(options);
  const state = stateOf(app);
  const warn = options.warn ?? ((message: string) => process.emitWarning(message, { code: "REIN_UNSIGNED_BUDGETS" }));
  return new Promise((resolve, reject) => {
    const serverOptions = {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.headersTimeoutMs + limits.bodyTimeoutMs,
      keepAliveTimeout: limits.idleTimeoutMs,
      // Node checks the two request timeouts on this interval (30 s by default): check often enough for them to hold.
      connectionsCheckingInterval: Math.max(25, Math.min(1_000, Math.floor(Math.min(limits.headersTimeoutMs, limits.bodyTimeoutMs) / 4))),
    };
    const server = nodeServe({ fetch: app.fetch, port: options.port ?? 0, hostname, serverOptions }, (info: AddressInfo) => {
      if (!policySecretSet()) warn(UNSIGNED_WARNING);
      let closing: Promise<void> | undefined;
      resolve({
        port: info.port,
        hostname,
        url: `http://${hostname}:${info.port}`,
        resumed: state === undefined || options.resumeInterrupted === false ? Promise.resolve({ resumed: [], leftAlone: [] }) : resumeWhileServing(state),
        close: () =>
          (closing ??= (async () => {
            if (state !== undefined) state.closing = true;
            const stopped = new Promise<void>((done) => server.close(() => done()));
            if (state !== undefined) {
              const deadline = Date.now() + graceMs;
              while (state.runs.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
              for (const controller of state.runs.values()) controller.abort(new InterruptedError("server shutting down"));
              state.store.interruptRunning();
              state.store.flush();
            }
            // The cancelled runs' answers (and their last feed events) are written within a few ticks; then the
            // streams that only watch end, each connection closes once it is idle, and after another grace period
            // every connection.
            await new Promise((r) => setTimeout(r, 20));
            state?.ending.abort();
            const http = server as Partial<Pick<HttpServer, "closeIdleConnections" | "closeAllConnections">>;
            http.closeIdleConnections?.();
            const idle = setInterval(() => http.closeIdleConnections?.(), 25);
            idle.unref();
            const forced = setTimeout(() => http.closeAllConnections?.(), graceMs);
            forced.unref();
            await stopped;
            clearInterval(idle);
            clearTimeout(forced);
            if (state?.ownsStore === true) state.store.close();
          })()),
      });
    });
    (server as HttpServer).maxConnections = limits.maxConnections;
    // A connection closed after its answer (a 413 for an oversize body) keeps reading until the client has it.
    lingerOnClose(server as HttpServer);
    server.once("error", reject);
  });
}

/** The one start-up warning of a server without a policy secret. */
const UNSIGNED_WARNING =
  "REIN_POLICY_SECRET is not set: X-Agent-Policy budgets are unsigned, so any caller can claim any budget up to this server's own policy. Set the same secret on every service of the chain (REIN_POLICY_SECRET=new,old during a rotation).";

/** The connection limits of {@link ListenOptions}, checked: each a positive integer. */
function connectionLimits(options: ListenOptions): Required<Pick<ListenOptions, "headersTimeoutMs" | "bodyTimeoutMs" | "idleTimeoutMs" | "maxConnections">> {
  const limits = {
    headersTimeoutMs: options.headersTimeoutMs ?? 10_000,
    bodyTimeoutMs: options.bodyTimeoutMs ?? 30_000,
    idleTimeoutMs: options.idleTimeoutMs ?? 5_000,
    maxConnections: options.maxConnections ?? 1_024,
  };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`serve(options): ${name} must be a positive integer, got ${String(value).slice(0, 40)}`);
  }
  return limits;
}

/** Continues interrupted runs as one more run in flight: shutdown waits for it, then cancels it. */
function resumeWhileServing(state: ServerState): Promise<ResumeInterruptedReport & { readonly error?: Error }> {
  const controller = new AbortController();
  // Under an owner no client has: not cancellable through the cancel route, not even by an admin key.
  const key = flightKey(INTERNAL_OWNER, "resume-on-start");
  state.runs.set(key, controller);
  return withRunListener(() => undefined, () => resumeOnStart(state.entries, state.store, state.reach), { signal: controller.signal })
    .catch((error: unknown) => ({ resumed: [], leftAlone: [], error: error instanceof Error ? error : new Error(String(error)) }))
    .finally(() => {
      state.runs.delete(key);
    });
}
