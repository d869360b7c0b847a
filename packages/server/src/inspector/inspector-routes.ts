import type { Context as HonoContext, Hono } from "hono";
import { situationalPrefix, type SessionNode, type SessionStoreLike } from "rein";
import type { ApiKeyScope } from "../auth/api-key";
import type { Caller } from "../auth/caller";
import { hasUnstorableText, MAX_SESSION_ID_LENGTH } from "@rein/session";
import { RequestError, bounded } from "../http-error";
import { clientSessionId, ownsSession, sessionFor } from "../ownership";
import { storeReads } from "../store-reads";
import { inspectorAsset, inspectorPage, type InspectorAsset } from "./inspector-assets";
import { safeJson as jsonOf } from "../safe-json";


/** What the Inspector's routes need. @internal */
export interface InspectorRoutesOptions {
  readonly store: SessionStoreLike;
  readonly who: (c: HonoContext, scope: ApiKeyScope) => Promise<Caller>;
  /** No steering: the page shows no buttons (`rein inspect`). */
  readonly readOnly: boolean;
}

/** Nodes per page of `GET /inspector/api/sessions/:id/nodes`. */
const PAGE = 200;
const MAX_PAGE = 2_000;

/**
 * Mounts the Inspector page at `/inspector` (its assets ship in the
 * package: no CDN) and the reads it needs beyond the API: the sessions
 * (`/inspector/api/sessions`), a session's nodes a page at a time
 * (`/inspector/api/sessions/:id/nodes?after=<seq>&limit=<n>`), the stored
 * resumable runs (`/inspector/api/runs`) and whether it may steer
 * (`/inspector/api/config`). Every read is scoped to the caller's key.
 * @internal
 */
export function mountInspector(app: Hono, options: InspectorRoutesOptions): void {
  const { store, who, readOnly } = options;
  // On the store's pool when it has one: a slow or stalled database holds the request, never the event loop.
  const reads = storeReads(store);
  // A long graph is read a page at a time; the store reads a session whole, so the last few sessions read are
  // kept until their next committed write (lastSeq and updatedAt change with every commit, updates included).
  const recent = new Map<string, { version: string; nodes: readonly SessionNode[] }>();
  const nodesOf = async (stored: string): Promise<readonly SessionNode[]> => {
    const info = await reads.getSession(stored);
    const version = `${info.lastSeq}:${info.updatedAt}:${info.nodeCount}`;
    const cached = recent.get(stored);
    if (cached !== undefined && cached.version === version) return cached.nodes;
    const nodes = await reads.readNodes(stored);
    recent.delete(stored);
    recent.set(stored, { version, nodes });
    if (recent.size > 4) recent.delete(recent.keys().next().value as string);
    return nodes;
  };
  const asset = (c: HonoContext, file: InspectorAsset) => c.body(inspectorAsset(file).body, 200, { "content-type": inspectorAsset(file).type, "cache-control": "no-cache" });
  const page = (c: HonoContext) => c.body(inspectorPage(), 200, { "content-type": inspectorAsset("index.html").type, "cache-control": "no-cache" });
  app.get("/inspector", page);
  app.get("/inspector/", page);
  app.get("/inspector/app.js", (c) => asset(c, "app.js"));
  app.get("/inspector/app.css", (c) => asset(c, "app.css"));

  app.get("/inspector/api/config", async (c) => {
    const caller = await who(c, "read");
    return c.json({ readOnly: readOnly || !caller.has("run"), live: !readOnly, store: storeLabel(store.location, caller) });
  });

  app.get("/inspector/api/sessions", async (c) => {
    const caller = await who(c, "read");
    const sessions = (await reads.listSessions())
      .filter((session) => ownsSession(caller, session.id))
      .slice(0, 200)
      .map((session) => ({ ...session, id: clientSessionId(caller, session.id) }));
    return c.json({ sessions });
  });

  app.get("/inspector/api/runs", async (c) => {
    const caller = await who(c, "read");
    const runs = (await reads.listRuns())
      .filter((run) => ownsSession(caller, run.sessionId))
      .slice(0, 200)
      .map((run) => ({ ...run, sessionId: clientSessionId(caller, run.sessionId) }));
    return c.json({ runs });
  });

  app.get("/inspector/api/sessions/:id/nodes", async (c) => {
    const caller = await who(c, "read");
    const id = c.req.param("id");
    // Any id a store can hold opens here, not only the ids a client may choose over HTTP (`rein run --session
    // "nightly run #3"` is one).
    const storable = id.length <= MAX_SESSION_ID_LENGTH && !hasUnstorableText(id);
    const stored = storable ? await sessionFor(caller, id, (candidate) => reads.hasSession(candidate)) : undefined;
    if (stored === undefined) throw new RequestError("not_found", `no session '${bounded(id)}'`);
    const after = integerOf(c.req.query("after"), -1, "after");
    const limit = Math.min(integerOf(c.req.query("limit"), PAGE, "limit"), MAX_PAGE);
    const nodes = await nodesOf(stored);
    const start = firstAfter(nodes, after);
    const page = withGuidance(nodes, nodes.slice(start, start + limit));
    return c.body(jsonOf({ sessionId: id, total: nodes.length, nodes: page, more: start + limit < nodes.length }), 200, { "content-type": "application/json" });
  });
}

/**
 * Each llm node of `page` recorded before llm nodes kept the request as sent
 * (no `input.history`) with the situational guidance its request carried
 * as `guidance`: such a node holds its new user content only, not the
 * guidance block the runtime puts first in that turn, so it is worded again
 * here from the enclosing code node (its name, `doc` and call path) by the
 * same `situationalPrefix` the runtime uses (without the runtime-only
 * position line).
 */
function withGuidance(all: readonly SessionNode[], page: readonly SessionNode[]): (SessionNode & { guidance?: string })[] {
  const byId = new Map<string, SessionNode>();
  for (const node of all) byId.set(node.id, node);
  return page.map((node) => {
    // A node recorded with the request as sent (its `history` count) needs nothing worded again.
    const asSent = typeof (node.input as { history?: unknown } | null)?.history === "number";
    const fn = node.role === "llm" && node.caller !== null && !asSent ? byId.get(node.caller) : undefined;
    if (fn === undefined || fn.role !== "code") return node;
    const callPath: string[] = [];
    for (let frame: SessionNode | undefined = fn; frame !== undefined && callPath.length < 64; frame = frame.caller === null ? undefined : byId.get(frame.caller)) {
      if (frame.role === "code") callPath.unshift(frame.name);
    }
    const doc = typeof fn.metadata["doc"] === "string" ? fn.metadata["doc"] : undefined;
    return { ...node, guidance: situationalPrefix(fn.name, doc, { callPath }) };
  });
}

/**
 * How the page names the store: where it is (credentials cut) for a caller
 * who sees everything (an admin key, or a server without auth: its
 * operator), only its kind for any other key — a client learns no database
 * host or file path, as the server's errors name none.
 */
function storeLabel(location: string, caller: Caller): string {
  if (caller.seesAll) return location.replace(/\/\/[^@/]*@/, "//");
  if (/^postgres(ql)?:\/\//.test(location)) return "Postgres store";
  return /^in-memory/.test(location) ? "in-memory store" : "SQLite store";
}

function integerOf(text: string | undefined, fallback: number, name: string): number {
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < -1) throw new RequestError("invalid_body", `${name} must be an integer ≥ -1, not '${bounded(text, 20)}'`);
  return value;
}

/** Index of the first node whose seq is above `after` (nodes are in seq order). */
function firstAfter(nodes: readonly SessionNode[], after: number): number {
  let low = 0;
  let high = nodes.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (nodes[middle]!.seq <= after) low = middle + 1;
    else high = middle;
  }
  return low;
}
