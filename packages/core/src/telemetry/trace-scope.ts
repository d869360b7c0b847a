import type { Span, Tracer } from "@opentelemetry/api";

/** The span of the innermost traced Rein call, with what its children need. */
export interface TraceScope {
  readonly tracer: Tracer;
  readonly span: Span;
  /** The agent (class name) whose `invoke_agent` span is the nearest one up: a loop of another agent opens its own. */
  readonly agent: string;
}
