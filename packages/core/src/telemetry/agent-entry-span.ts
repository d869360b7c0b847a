import type { Span } from "@opentelemetry/api";
import type { ReachError, ReachRun } from "@rein/guard";
import type { CallScope, ScopedFunctionInfo } from "../scope/call-scope";
import { activeTracer, addSpanEvent, SPAN_EVENT, startAgentSpan, type TraceScope } from "./tracing";

/**
 * The trace scope of an Agent entry: a new `invoke_agent <Agent>` span
 * under the caller's when an SDK is registered, else the caller's scope as
 * it was (nothing allocated).
 * @internal
 */
export function traceAgentEntry(
  parent: CallScope | undefined,
  owner: object | undefined,
  info: ScopedFunctionInfo,
  sessionId: string | undefined,
  nodeId: string | undefined,
): TraceScope | undefined {
  const tracer = activeTracer();
  if (tracer === undefined) return parent?.trace;
  const agent = owner?.constructor.name ?? info.name;
  const span = startAgentSpan(tracer, parent, agent, { functionName: info.name, sessionId, nodeId });
  return { tracer, span, agent };
}

/** The reach figures at an Agent entry as a span event, and the refusal when reach refused it. */
export function traceReach(span: Span, reach: ReachRun, agentDepth: number, refusal: ReachError | undefined): void {
  addSpanEvent(span, SPAN_EVENT.reachStatus, () => reachAttributes(reach, agentDepth));
  if (refusal !== undefined) addSpanEvent(span, SPAN_EVENT.reachRefusal, () => ({ "rein.reach.error": refusal.message }));
}

/** The `currentReach()` figures as span attributes. */
export function reachAttributes(reach: ReachRun, agentDepth: number): Record<string, string | number> {
  const status = reach.status(agentDepth);
  const values: Record<string, string | number> = {};
  for (const [key, value] of Object.entries(status)) {
    if (typeof value === "string" || isFiniteNumber(value)) values[`rein.reach.${key}`] = value;
    else if (typeof value === "object" && value !== null) {
      // An unlimited figure (Infinity) is left out: exporters write JSON, which has no Infinity.
      for (const [part, figure] of Object.entries(value as Record<string, unknown>)) {
        if (isFiniteNumber(figure)) values[`rein.reach.${key}.${part}`] = figure;
      }
    }
  }
  return values;
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}
