import { Hono, type Context as HonoContext } from "hono";
import type { SessionStoreLike } from "rein";
import { authenticate, type AuthOptions, type Caller } from "../auth/caller";
import type { ApiKeyScope } from "../auth/api-key";
import { RequestError, STATUS_OF, bounded, errorBody } from "../http-error";
import { isStoreFault, STORE_UNAVAILABLE } from "../store-fault";
import { mountInspector } from "./inspector-routes";

/**
 * Options of {@link createInspector}.
 * @example
 * ```ts
 * createInspector({ store: new SessionStore({ path: ".rein/sessions.db" }) });
 * ```
 */
export interface CreateInspectorOptions {
  /** The store whose sessions and resumable runs the page shows (only read; never closed by the inspector). */
  readonly store: SessionStoreLike;
  /** API keys: the page then asks for one (`read` scope) and sends it as `Authorization: Bearer`. @default undefined (open) */
  readonly auth?: AuthOptions;
  /** Receives store faults behind a 503. @default one line on stderr */
  readonly onInternalError?: (error: unknown) => void;
}

/**
 * A read-only Inspector over a session store written by any process (what
 * `rein inspect <store>` serves): the page at `/inspector` lists the
 * store's sessions and resumable runs and draws their graphs and node
 * details, with no buttons (nothing runs here, so there is nothing to stop,
 * approve or resume). `/` redirects to the page. Serve it with
 * `@hono/node-server` or {@link serve}'s `{ app }` form.
 * @example
 * ```ts
 * const app = createInspector({ store: new SessionStore({ path: ".rein/sessions.db" }) });
 * const server = await serve({ app, port: 4000, resumeInterrupted: false });
 * console.log(`${server.url}/inspector`);
 * ```
 */
export function createInspector(options: CreateInspectorOptions): Hono {
  if (typeof options !== "object" || options === null || typeof options.store?.readNodes !== "function") {
    throw new TypeError("createInspector(options): options.store must be a session store (SessionStore, InMemorySessionStore or PostgresSessionStore)");
  }
  const report = options.onInternalError ?? ((error: unknown) => process.stderr.write(`rein inspect: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}\n`));
  const app = new Hono();
  const fail = (c: HonoContext, error: RequestError) => c.json(errorBody(error.type, error.message), STATUS_OF[error.type]);
  app.onError((error, c) => {
    if (error instanceof RequestError) {
      if (error.type === "unauthorized") c.header("www-authenticate", 'Bearer realm="rein"');
      return fail(c, error);
    }
    report(error);
    return fail(c, new RequestError(isStoreFault(error) ? "store_unavailable" : "invalid_body", isStoreFault(error) ? STORE_UNAVAILABLE : "the request could not be handled"));
  });
  app.notFound((c) => fail(c, new RequestError("not_found", `no route ${bounded(c.req.method, 16)} ${bounded(c.req.path)} (the inspector is at /inspector)`)));
  const who = async (c: HonoContext, scope: ApiKeyScope): Promise<Caller> => authenticate(options.auth, c.req.header("authorization"), scope);
  app.get("/", (c) => c.redirect("/inspector"));
  mountInspector(app, { store: options.store, who, readOnly: true });
  return app;
}
