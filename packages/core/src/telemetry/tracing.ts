import type * as OtelApi from "@opentelemetry/api";
import type { Attributes, Context as OtelContext, Span, Tracer, TracerProvider } from "@opentelemetry/api";
import { parseTraceparent, describeError, errorMessage } from "@rein/guard";
import type { CallScope } from "../scope/call-scope";
import type { TraceScope } from "./trace-scope";

export type { TraceScope } from "./trace-scope";

/**
 * OpenTelemetry spans of Rein runs, following the GenAI semantic
 * conventions: `invoke_agent <Agent>`, `chat <model>`, `execute_tool <name>`.
 *
 * With no SDK registered nothing here allocates and the API is not even
 * loaded: {@link activeTracer} is undefined and every call site skips its span. Spans nest by Rein's own
 * call structure (the span travels on the call scope), so the tree matches
 * the session DAG even without an OpenTelemetry context manager; with one,
 * user code inside a method or tool runs with Rein's span active.
 * @internal
 */

/** The tracer name spans carry (`otel.scope.name`). */
export const TRACER_NAME = "@rein/core";

/** Rein's span events, one per guard decision a trace viewer should show on the span it happened in. */
export const SPAN_EVENT = {
  guardRefusal: "rein.guard_refusal",
  loopWarning: "rein.loop_warning",
  loopBlock: "rein.loop_block",
  reachStatus: "rein.reach_status",
  reachRefusal: "rein.reach_refusal",
} as const;

/**
 * Where every copy of the OpenTelemetry API (1.x) keeps what was registered
 * globally; `trace` is set there once a tracer provider is registered.
 */
const GLOBAL_API_KEY = Symbol.for("opentelemetry.js.api.1");

let loadedApi: typeof OtelApi | undefined;
/** The delegate a proxy provider has while nobody registered a real one. */
let noopProvider: TracerProvider | undefined;
let cachedProvider: TracerProvider | undefined;
let cachedTracer: Tracer | undefined;

/**
 * The OpenTelemetry API, loaded the first time a tracer provider is found
 * registered: a program that traces nothing never loads it (~12 ms of start-up).
 */
export function otel(): typeof OtelApi {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (loadedApi ??= require("@opentelemetry/api") as typeof OtelApi);
}

/** Whether some copy of the API has a tracer provider registered (read without loading the API). */
function providerRegistered(): boolean {
  const registered = (globalThis as { [GLOBAL_API_KEY]?: { trace?: unknown } })[GLOBAL_API_KEY];
  return registered?.trace !== undefined;
}

/**
 * The tracer of the registered tracer provider, or undefined while none is
 * registered (the API alone installs no-ops): checked where a run or an
 * Agent entry starts, so an SDK registered later is picked up by the next run.
 */
export function activeTracer(): Tracer | undefined {
  if (!providerRegistered()) return undefined;
  const { trace, ProxyTracerProvider } = otel();
  noopProvider ??= new ProxyTracerProvider().getDelegate();
  const global = trace.getTracerProvider();
  const provider = global instanceof ProxyTracerProvider ? global.getDelegate() : global;
  if (provider === noopProvider) return undefined;
  if (provider !== cachedProvider) {
    cachedProvider = provider;
    cachedTracer = provider.getTracer(TRACER_NAME);
  }
  return cachedTracer;
}

/**
 * The context a new span starts under: the active OpenTelemetry context when
 * it holds a span (a caller's trace, or Rein's own span made active for the
 * code it runs), else the span of the enclosing Rein call, else the
 * `traceparent` a reach budget arrived with (`withReachBudget(…, { traceparent })`).
 */
export function parentContext(scope: CallScope | undefined): OtelContext {
  const { context: otelContext, trace } = otel();
  const active = otelContext.active();
  if (trace.getSpan(active) !== undefined) return active;
  const span = scope?.trace?.span;
  if (span !== undefined) return trace.setSpan(active, span);
  const remote = parseTraceparent(scope?.reach?.traceparent);
  if (remote === undefined) return active;
  return trace.setSpanContext(active, {
    traceId: remote.traceId,
    spanId: remote.parentId,
    traceFlags: parseInt(remote.flags, 16) & 1,
    isRemote: true,
  });
}

/** Starts the `invoke_agent <agent>` span of one Agent entry or of a loop run outside one. */
export function startAgentSpan(
  tracer: Tracer,
  scope: CallScope | undefined,
  agent: string,
  attributes: { readonly functionName?: string; readonly sessionId?: string; readonly nodeId?: string; readonly model?: string },
): Span {
  const span = tracer.startSpan(`invoke_agent ${agent}`, { kind: otel().SpanKind.INTERNAL }, parentContext(scope));
  if (span.isRecording()) {
    const values: Attributes = { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent };
    if (attributes.functionName !== undefined) values["rein.function.name"] = attributes.functionName;
    if (attributes.model !== undefined && attributes.model !== "") values["gen_ai.request.model"] = attributes.model;
    if (attributes.sessionId !== undefined) {
      values["gen_ai.conversation.id"] = attributes.sessionId;
      values["rein.session.id"] = attributes.sessionId;
    }
    if (attributes.nodeId !== undefined) values["rein.node.id"] = attributes.nodeId;
    span.setAttributes(values);
  }
  return span;
}

/** Runs `fn` with `span` active in the OpenTelemetry context (user code inside it nests its own spans there). */
export function withActiveSpan<R>(span: Span, fn: () => R): R {
  const { context: otelContext, trace } = otel();
  return otelContext.with(trace.setSpan(otelContext.active(), span), fn);
}

/**
 * Runs `fn` and ends `span` once its result settles: status ERROR with the
 * exception recorded when it throws or rejects (a cancellation too; its
 * `error.type` says which).
 */
export function endSpanWith<R>(span: Span, fn: () => R): R {
  let result: R;
  try {
    result = fn();
  } catch (error) {
    failSpan(span, error);
    span.end();
    throw error;
  }
  if (result instanceof Promise) {
    return result.then(
      (value: unknown) => {
        span.end();
        return value;
      },
      (error: unknown) => {
        failSpan(span, error);
        span.end();
        throw error;
      },
    ) as R;
  }
  span.end();
  return result;
}

/** Records `error` on `span` with status ERROR (the span stays open). */
export function failSpan(span: Span, error: unknown): void {
  if (!span.isRecording()) return;
  const message = errorMessage(error);
  span.setStatus({ code: otel().SpanStatusCode.ERROR, message });
  span.setAttribute("error.type", errorType(error));
  if (error instanceof Error) span.recordException(error);
  else span.recordException({ name: "NonError", message: describeError(error) });
}

/**
 * The W3C `traceparent` of the span the current code runs in — the active
 * OpenTelemetry span, else the innermost traced Rein call's — so a request
 * made now continues this trace below that span; undefined with neither.
 */
export function spanTraceparent(scope: CallScope | undefined): string | undefined {
  if (scope?.trace === undefined && !providerRegistered()) return undefined;
  const { context: otelContext, trace, isSpanContextValid } = otel();
  const span = trace.getSpan(otelContext.active()) ?? scope?.trace?.span;
  const spanContext = span?.spanContext();
  if (spanContext === undefined || !isSpanContextValid(spanContext)) return undefined;
  return `00-${spanContext.traceId}-${spanContext.spanId}-0${spanContext.traceFlags & 1}`;
}

/** Adds a span event when the span records (the attributes are built only then). */
export function addSpanEvent(span: Span | undefined, name: string, attributes: () => Attributes): void {
  if (span === undefined || !span.isRecording()) return;
  span.addEvent(name, attributes());
}

/** The `error.type` of a failure: the error's name (`ToolLoopError`, `ProviderError`, …). */
function errorType(error: unknown): string {
  if (error instanceof Error) return error.name || "Error";
  return typeof error;
}

/** Message content as a span attribute: JSON, or a readable string when it is not JSON. */
export function contentAttribute(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
