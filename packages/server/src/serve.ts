import type { Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { serve as nodeServe } from "@hono/node-server";
import type { Hono } from "hono";
import { stateOf } from "./server-state";
import { InterruptedError } from "rein";

/**
 * Options of {@link serve}.
 * @example
 * ```ts
 * await serve({ app, port: 8080, hostname: "127.0.0.1", graceMs: 10_000 });
 * ```
 */
export interface ServeOptions {
  /** The app from {@link createServer}. */
  readonly app: Hono;
  /** @default 0 (a free port) */
  readonly port?: number;
  /** @default "127.0.0.1" */
  readonly hostname?: string;
  /** How long `close()` lets runs in flight finish before cancelling them. @default 10_000 */
  readonly graceMs?: number;
}

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
   * Stops accepting connections (new runs get 503), waits up to `graceMs`
   * for runs in flight, cancels the rest, marks the store's running nodes
   * `interrupted`, flushes it, and closes only what the server opened
   * (its default in-memory store).
   */
  close(): Promise<void>;
}

/**
 * Listens with `@hono/node-server` and resolves once the port is bound.
 * @example
 * ```ts
 * const server = await serve({ app: createServer({ entries }), port: 8080 });
 * process.on("SIGTERM", () => void server.close());
 * ```
 */
export function serve(options: ServeOptions): Promise<RunningServer> {
  const hostname = options.hostname ?? "127.0.0.1";
  const graceMs = options.graceMs ?? 10_000;
  const state = stateOf(options.app);
  return new Promise((resolve, reject) => {
    const server = nodeServe({ fetch: options.app.fetch, port: options.port ?? 0, hostname }, (info: AddressInfo) => {
      let closing: Promise<void> | undefined;
      resolve({
        port: info.port,
        hostname,
        url: `http://${hostname}:${info.port}`,
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
            // The cancelled runs' answers are written within a few ticks; then idle keep-alive
            // connections are closed, and after another grace period every connection.
            await new Promise((r) => setTimeout(r, 20));
            const http = server as Partial<Pick<HttpServer, "closeIdleConnections" | "closeAllConnections">>;
            http.closeIdleConnections?.();
            const forced = setTimeout(() => http.closeAllConnections?.(), graceMs);
            forced.unref();
            await stopped;
            clearTimeout(forced);
            if (state?.ownsStore === true) state.store.close();
          })()),
      });
    });
    server.once("error", reject);
  });
}
