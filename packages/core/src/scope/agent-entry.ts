import type { Span } from "@opentelemetry/api";
import { ReachRun, type ReachError } from "@rein/guard";
import type { RunEvents } from "../runtime/run-events";
import { traceAgentEntry, traceReach } from "../telemetry/agent-entry-span";
import type { TraceScope } from "../telemetry/trace-scope";
import type { CallScope, ScopedFunctionInfo } from "./call-scope";
import type { ScopeOwner } from "./scope-owner";

/** What entering a scoped call means for the agent nesting, the reach budget and the trace. @internal */
export interface AgentEntry {
  /** Logic depth of the new scope. */
  readonly agentDepth: number;
  /** The agent whose method the new scope (or the nearest enclosing one) runs. */
  readonly agent: object | undefined;
  /** The reach run of the new scope (a first Agent entry under a policy starts one). */
  readonly reach: ReachRun | undefined;
  /** Set when reach refused the entry: the call must not run (see {@link answerRefusal}). */
  readonly refusal: ReachError | undefined;
  /** The trace scope of the new scope. */
  readonly trace: TraceScope | undefined;
  /** The `invoke_agent` span this entry opened (the caller ends it), if any. */
  readonly span: Span | undefined;
}

/**
 * The one place an Agent is entered — by an ordinary method, a resumable
 * method, a turn or a server entry: a method of an agent called from
 * outside that agent uses one level of logic depth, is checked against the
 * reach budget that applies (the caller's, else a new run of the agent's
 * policy), reports `reach-status`, and opens its `invoke_agent` span. A call
 * from inside the same agent (its own helper, also under `withReachBudget`
 * or `withRunListener`) is no entry and costs nothing here.
 * @internal
 */
export function enterAgent(
  parent: CallScope | undefined,
  owner: ScopeOwner | undefined,
  info: ScopedFunctionInfo,
  events: RunEvents | undefined,
  sessionId: string | undefined,
  nodeId: string | undefined,
  entry: ScopeOwner["agentEntry"] = owner?.agentEntry,
): AgentEntry {
  const agent = entry !== undefined ? owner : parent?.agent;
  if (entry === undefined || parent?.agent === owner) {
    return { agentDepth: parent?.agentDepth ?? 0, agent, reach: parent?.reach, refusal: undefined, trace: parent?.trace, span: undefined };
  }
  const agentDepth = (parent?.agentDepth ?? 0) + 1;
  const trace = traceAgentEntry(parent, owner, info, sessionId, nodeId);
  const span = trace !== parent?.trace ? trace?.span : undefined;
  let reach = parent?.reach;
  // An agent with a policy of its own is held to it inside a caller's run too: a run within the caller's, which only narrows it.
  if (entry.reachPolicy !== undefined && reach?.policy !== entry.reachPolicy) {
    const outer = reach;
    reach = new ReachRun(entry.reachPolicy, undefined, Date.now(), outer === undefined ? undefined : { run: outer, depth: parent!.agentDepth ?? 0, nested: true });
    reach.traceparent = outer?.traceparent;
  }
  let refusal: ReachError | undefined;
  if (reach !== undefined) {
    try {
      reach.enter(agentDepth);
    } catch (error) {
      refusal = error as ReachError;
    }
    if (events?.listening === true) events.emit({ type: "reach-status", ...reach.status(agentDepth) });
    if (span !== undefined) traceReach(span, reach, agentDepth, refusal);
  }
  return { agentDepth, agent, reach, refusal, trace, span };
}

/**
 * What a call refused by reach resolves with: the agent's `fallback(task,
 * error)` value when it has one (a promise for an async method), else the
 * refusal is thrown.
 * @internal
 */
export function answerRefusal(owner: ScopeOwner | undefined, info: ScopedFunctionInfo, args: readonly unknown[], refusal: ReachError): unknown {
  const fallback = owner?.agentEntry?.fallback;
  if (fallback === undefined) throw refusal;
  const result = fallback({ name: info.name, args }, refusal);
  return info.isAsync && !(result instanceof Promise) ? Promise.resolve(result) : result;
}
