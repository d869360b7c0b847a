import * as guard from "@rein/guard";
import {
  childTraceparent,
  encodePolicyHeader,
  mayReceiveBudget,
  parseTraceparent,
  passOnBudget,
  POLICY_HEADER_NAME,
  ReachPolicy,
  ReachRun,
  TRACEPARENT_HEADER_NAME,
  type ReachBudget,
  type ReachStatus,
} from "@rein/guard";
import { Context } from "../context/context";
import { currentScope, deriveScope } from "../scope/call-scope";
import { spanTraceparent } from "../telemetry/tracing";

/**
 * The live reach budget and usage of the running call — logic depth,
 * memory growth, zone, tokens, cost, elapsed time — or undefined when no
 * reach policy applies to it.
 * @example
 * ```ts
 * const reach = currentReach();
 * if (reach) console.log(`[REACH] Depth ${reach.depth.used}/${reach.depth.limit} | ${reach.tokens.used} tokens`);
 * ```
 */
export function currentReach(): ReachStatus | undefined {
  const scope = currentScope();
  return scope?.reach?.status(scope.agentDepth ?? 0);
}

/**
 * What a call made now may pass on to another service: the budget left
 * after this call's own Agent entries (the callee's first Agent entry uses
 * one level, so a budget with `depth: 0` is refused there). Undefined when
 * no reach policy applies.
 * @example
 * ```ts
 * const header = encodePolicyHeader(childBudget()!);
 * ```
 */
export function childBudget(): ReachBudget | undefined {
  const scope = currentScope();
  const reach = scope?.reach;
  return reach === undefined ? undefined : passOnBudget(reach.remaining(scope!.agentDepth ?? 0));
}

/** The budget fields besides `depth` that set a limit when present. */
const LIMIT_FIELDS = ["memoryMb", "tokens", "costUsd", "deadline"] as const;

/**
 * Runs `fn` (sync or async) with a budget received from a caller — what a
 * server does with a decoded `X-Agent-Policy` header — clamped to `policy`
 * (default: a `ReachPolicy` with its defaults): the calls `fn` makes can
 * never reach further than the caller had left, nor than the local policy
 * allows. Logic depth starts at 0 here: the first Agent entry uses one
 * level of `budget.depth`. Called inside a run, it can only narrow what
 * that run has left — depth, tokens, cost, deadline, memory and zones are
 * each the smaller of the two, and what `fn` spends is charged to the
 * run as well.
 * @example
 * ```ts
 * app.post("/run", (c) => withReachBudget(decodePolicyHeader(c.req.header("x-agent-policy")), () => agent.run(c.req.json())));
 * ```
 */
export function withReachBudget<R>(budget: ReachBudget, fn: () => R, options: WithReachBudgetOptions = {}): R {
  const policy = options.policy ?? new ReachPolicy();
  if (typeof fn !== "function") throw new TypeError("withReachBudget(budget, fn): fn must be a function");
  if (typeof budget !== "object" || budget === null || !(budget.depth === Infinity || (Number.isInteger(budget.depth) && budget.depth >= 0))) {
    throw new TypeError(
      "withReachBudget(budget, fn): budget must be a ReachBudget with a non-negative integer (or Infinity) depth (decode it with decodePolicyHeader)",
    );
  }
  for (const field of LIMIT_FIELDS) {
    const value: unknown = budget[field];
    // NaN would disable a limit, or (a deadline) cut off every request at once: refused, as the header refuses it.
    if (value !== undefined && !(typeof value === "number" && value >= 0)) {
      const shown = typeof value === "string" ? `'${value}'` : String(value);
      throw new TypeError(`withReachBudget(budget, fn): budget.${field} must be a non-negative number (or Infinity), or left out; got ${shown}`);
    }
  }
  const parent = currentScope();
  // Inside a run, a received budget only narrows what the caller has left (every dimension), and is charged to it too.
  const outer = parent?.reach;
  const run = new ReachRun(policy, budget, Date.now(), outer === undefined ? undefined : { run: outer, depth: parent!.agentDepth ?? 0 });
  if (options.traceparent !== undefined && parseTraceparent(options.traceparent) !== undefined) run.traceparent = options.traceparent;
  else if (outer?.traceparent !== undefined) run.traceparent = outer.traceparent;
  // The caller's agent goes on: its own helpers called in here are not a new agent entry.
  const scope = deriveScope(parent);
  scope.context = parent?.context ?? new Context();
  scope.reach = run;
  scope.agentDepth = 0;
  return guard.withFrameData(scope, fn);
}

/**
 * Options of {@link withReachBudget}.
 * @example
 * ```ts
 * withReachBudget(budget, handler, { policy: loadReachConfig(), traceparent: request.headers.get("traceparent") ?? undefined });
 * ```
 */
export interface WithReachBudgetOptions {
  /** The local policy the budget is clamped to. @default new ReachPolicy() (its defaults) */
  readonly policy?: ReachPolicy;
  /** The caller's W3C `traceparent`: calls made from `fn` continue its trace. */
  readonly traceparent?: string;
}

/**
 * `fetch` that passes the current call's reach on: `X-Agent-Policy` with
 * the budget left ({@link childBudget}, signed when `REIN_POLICY_SECRET` is
 * set) and a W3C `traceparent` continuing the run's trace (a new trace when
 * it has none; with an OpenTelemetry SDK registered, the parent is the
 * span the call runs in, e.g. its `execute_tool` span). Outside any reach policy it adds only the `traceparent`.
 * @example
 * ```ts
 * const response = await reachFetch("http://search-agent.internal/v1/agent/run", { method: "POST", body: JSON.stringify(task) });
 * ```
 */
export function reachFetch(url: string | URL, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const budget = childBudget();
  const policyHeader = budget === undefined ? undefined : reachPolicyHeader(url, budget);
  if (policyHeader !== undefined) headers.set(POLICY_HEADER_NAME, policyHeader);
  const scope = currentScope();
  headers.set(TRACEPARENT_HEADER_NAME, spanTraceparent(scope) ?? childTraceparent(scope?.reach?.traceparent));
  return fetch(url, { ...init, headers });
}

/**
 * The `X-Agent-Policy` value `reachFetch` sends to `url`: the budget,
 * signed with the first `REIN_POLICY_SECRET` (then carrying its expiry and
 * the issuing call's node id), or undefined when `url` may not receive it.
 */
function reachPolicyHeader(url: string | URL, budget: ReachBudget): string | undefined {
  if (!mayReceiveBudget(url)) return undefined;
  const callId = currentScope()?.cursor?.callId ?? undefined;
  return encodePolicyHeader(budget, callId === undefined || callId === null || !/^[A-Za-z0-9._:-]{1,128}$/.test(callId) ? {} : { runId: callId });
}
