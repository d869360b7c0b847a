import * as guard from "@rein/guard";
import { ChainDepthError, CycleError, GuardError, ProviderError, RecursionError, ToolTimeoutError, UnknownToolError, UsageError, describeError, errorMessage, MaxStepsExceededError, MissingProviderError, ToolArgumentsError } from "@rein/guard";
import type { ToolResultBlock, ToolUseBlock } from "../model/content";
import { deriveScope, type CallScope } from "../scope/call-scope";
import type { Tool } from "../tools/tool";
import { abortReason, CancellationRegion, isCancellation, raceSignal } from "./cancellation";
import type { Execution } from "./execution";
import type { LoopGuard } from "./loop-guard";
import type { RunEvents } from "./run-events";
import { CallLimit, raceRunLimits } from "./call-limit";
import type { Span } from "@opentelemetry/api";
import { resultToolSpan, startToolSpan, type LoopTracing } from "../telemetry/loop-spans";
import { addSpanEvent, endSpanWith, SPAN_EVENT, withActiveSpan } from "../telemetry/tracing";
import { toolContentBlocks } from "../tools/tool-content";

const withFrameData = guard.withFrameData;

/** What a tool call needs from the loop running it. */
export interface ToolCallSite {
  readonly execution: Execution;
  readonly events: RunEvents;
  /** The loop's scope: tool calls run in a child of it and record at its cursor. */
  readonly scope: CallScope;
  /** The llm node that asked for the call. */
  readonly requestedBy: string | null;
  /** Exactly the tools offered to the model in this request: nothing else runs. */
  readonly offered: ReadonlyMap<string, Tool>;
  /** Tools the loop was given but withheld from the model (a deny list): named in the refusal. */
  readonly withheld: ReadonlySet<string>;
  readonly signal: AbortSignal | undefined;
  readonly loopGuard: LoopGuard;
  /** Calls a paused turn's resume approved (their `requiresApproval` check is answered). */
  readonly approved?: ReadonlySet<string>;
  /** Set while an OpenTelemetry SDK is registered: each call gets an `execute_tool` span. */
  readonly tracing?: LoopTracing;
}

/** What a call produced: the block the model sees, and what loop detection records. */
interface Outcome {
  readonly block: ToolResultBlock;
  readonly recorded: { readonly result?: unknown; readonly error?: unknown };
}

const BLOCKED = { status: "blocked", reason: "tool-loop" } as const;

/**
 * Runs one tool call from the model and returns its result block, doing
 * every step in one place: loop guard → permission check (only tools
 * offered in this request run) → argument and guard checks → execution
 * (with the run's signal, the tool's timeout and the reach deadline) →
 * loop record → events.
 *
 * Bad input (malformed arguments, an unknown or withheld tool, arguments
 * that fail the schema) and tool failures — whatever was thrown, Error or
 * not — become error results the model sees. A guard refusal is reported to
 * the model once per run; the second aborts the whole run. Errors that end
 * the run (step budget, cancellation, the reach deadline passing while the
 * tool runs, provider failures, an earlier abort, `ToolLoopError`) propagate.
 */
export function executeToolCall(call: ToolUseBlock, site: ToolCallSite): Promise<ToolResultBlock> {
  const tool = site.offered.get(call.name);
  const tracing = site.tracing;
  if (tracing === undefined) return executeTraced(call, tool, site, undefined);
  const span = startToolSpan(tracing, site.scope, call, tool);
  return endSpanWith(span, () => executeTraced(call, tool, site, span));
}

async function executeTraced(call: ToolUseBlock, tool: Tool | undefined, site: ToolCallSite, span: Span | undefined): Promise<ToolResultBlock> {
  // Loop detection sees every call, including malformed and unknown ones (which count toward unknown_tool_repeat).
  const blocked = site.loopGuard.before(call, tool?.poll ?? false, span);
  const { events } = site;
  // A safe point as before a model request: a stream's slow consumer holds the run here, so one answer asking for
  // many calls never buffers their events without bound — until the run's signal or its reach deadline, as there.
  const room = events.ready();
  if (room !== undefined) await raceRunLimits(room, site.signal, site.scope.reach);
  site.scope.ledger?.chargeToolCall();
  if (events.listening) events.emit({ type: "tool-call", toolCallId: call.id, name: call.name, input: call.input });
  const outcome: Outcome = blocked !== undefined ? { block: blocked, recorded: { result: BLOCKED } } : await attempt(call, tool, site, span);
  if (span !== undefined) resultToolSpan(site.tracing!, span, outcome.block, outcome.recorded.error);
  site.loopGuard.after(call, outcome.recorded);
  const { block } = outcome;
  if (block.isError === true) {
    events.logger.info({ tool: call.name, toolCallId: call.id }, String(block.content));
    if (events.listening) events.emit({ type: "tool-result", toolCallId: call.id, name: call.name, output: block.content, isError: true });
  } else if (events.listening) {
    events.emit({ type: "tool-result", toolCallId: call.id, name: call.name, output: block.content, isError: false });
  }
  return block;
}

async function attempt(call: ToolUseBlock, tool: Tool | undefined, site: ToolCallSite, span: Span | undefined): Promise<Outcome> {
  if (call.inputError !== undefined) {
    return failed(
      call,
      `Tool '${call.name}' was called with malformed arguments (${call.inputError}). ` +
        `Call it again with one JSON object that matches its parameters schema.`,
      new Error(call.inputError),
    );
  }
  if (tool === undefined) return notOffered(call, site);
  const limit = CallLimit.ofTool(call.name, tool.timeout, site.scope.reach, site.signal);
  try {
    const value = await run(tool, call, site, span, limit);
    return { block: { type: "tool_result", toolUseId: call.id, content: resultContent(value, tool.maxResultChars) }, recorded: { result: value } };
  } catch (error) {
    if (site.execution.isAbortError(error) || site.signal?.aborted === true || limit?.endsRun(error) === true || site.scope.reach?.deadlineReachedBy(error) === true || endsTheRun(error)) throw error;
    if (GuardError.isInstance(error)) return refused(call, error, site, span);
    // Cancelled on its own (its own timeout, a nested agent's own signal, a hook refusing this one call):
    // that call is over, the run is not.
    if (isCancellation(error)) return failed(call, `Tool '${call.name}' was cancelled: ${errorMessage(error)}`, error);
    if (ToolArgumentsError.isInstance(error)) {
      return failed(call, `${error.message}. Call '${call.name}' again with arguments matching its schema.`, error);
    }
    if (ToolTimeoutError.isInstance(error)) return failed(call, `Tool '${call.name}' failed: ${error.message}`, error);
    return failed(call, `Tool '${call.name}' failed: ${errorMessage(error)}`, error);
  } finally {
    limit?.dispose();
  }
}

/**
 * Executes the tool in a child scope of the loop (so the call it makes
 * links to the model turn that asked for it), with the run's signal — or,
 * under a {@link CallLimit} (a timeout, a reach deadline), a signal
 * that also fires at the limit — and races it: a tool that ignores its
 * signal cannot hold the run.
 */
function run(tool: Tool, call: ToolUseBlock, site: ToolCallSite, span: Span | undefined, limit: CallLimit | undefined): Promise<unknown> {
  const parent = site.scope;
  const signal = limit === undefined ? site.signal : limit.signal;
  // A signal that fired before the call started (even from a listener of its `tool-call` event, or a deadline already past) stops it unstarted.
  if (signal?.aborted === true) return Promise.reject(abortReason(signal));
  const region = limit === undefined ? parent.region : new CancellationRegion(signal!);
  const scope = deriveScope(parent);
  scope.toolCall = { id: call.id, name: call.name, requestedBy: site.requestedBy };
  scope.signal = signal;
  scope.region = region;
  if (span !== undefined) scope.trace = { tracer: site.tracing!.tracer, span, agent: parent.trace?.agent ?? "" };
  const approved = site.approved?.has(call.id) === true;
  const work =
    span === undefined
      ? withFrameData(scope, execute, tool, call.input, signal, approved)
      : withActiveSpan(span, () => withFrameData(scope, execute, tool, call.input, signal, approved));
  if (signal === undefined) return work;
  const raced = raceSignal(work, signal);
  if (region === parent.region) return raced;
  return raced.finally(() => region?.dispose());
}

/** Calls `execute`, turning a synchronous throw into a rejection. */
async function execute(tool: Tool, input: unknown, signal: AbortSignal | undefined, approved: boolean): Promise<unknown> {
  if (approved) return tool.execute(input, signal === undefined ? { approved } : { signal, approved });
  return tool.execute(input, signal === undefined ? {} : { signal });
}

/**
 * Errors the model cannot do anything about end the run instead of
 * becoming a tool result: the step budget, a provider failure, and a
 * developer's code or configuration mistake (`UsageError`, e.g. a nested
 * agent with no provider or a second writer on the session). Cancellation
 * ends the run only when it is the run's own (its signal fired).
 */
function endsTheRun(error: unknown): boolean {
  return (
    UsageError.isInstance(error) ||
    MaxStepsExceededError.isInstance(error) ||
    ProviderError.isInstance(error) ||
    MissingProviderError.isInstance(error)
  );
}

function failed(call: ToolUseBlock, message: string, error: unknown): Outcome {
  return { block: { type: "tool_result", toolUseId: call.id, content: message, isError: true }, recorded: { error } };
}

/** The permission check: a tool that was not offered in this request never runs, whatever the model asks. */
function notOffered(call: ToolUseBlock, site: ToolCallSite): Outcome {
  const names = [...site.offered.keys()];
  const available =
    names.length > 0 ? `Available tools: ${names.join(", ")}. Call one of those, or answer directly.` : "No tools are available here; answer directly.";
  const message = site.withheld.has(call.name)
    ? `Tool '${call.name}' is not available here (withheld by a deny list). ${available}`
    : `Unknown tool '${call.name}'. ${available}`;
  return failed(call, message, new UnknownToolError(call.name, names));
}

/** A guard refused the call: the model is told once; a second refusal in the run aborts it. */
function refused(call: ToolUseBlock, error: GuardError, site: ToolCallSite, span: Span | undefined): Outcome {
  const { execution, events } = site;
  execution.refusals++;
  const aborted = execution.refusals >= 2;
  events.emit({ type: "guard-refusal", toolCallId: call.id, name: call.name, error, aborted });
  addSpanEvent(span, SPAN_EVENT.guardRefusal, () => ({ "rein.guard.error": error.name, "rein.guard.message": error.message, "rein.guard.aborted": aborted }));
  events.logger.warn({ tool: call.name, refusals: execution.refusals, aborted }, error.message);
  if (aborted) throw execution.abort(error);
  return {
    block: { type: "tool_result", toolUseId: call.id, content: refusalMessage(error, call.name), isError: true },
    recorded: { error },
  };
}

/** What the model is told when a guard refused its call: what happened and what to do instead. */
function refusalMessage(error: GuardError, toolName: string): string {
  if (RecursionError.isInstance(error)) {
    return (
      `Refused: ${error.message}. The recursion ceiling (${error.limit}) was hit — you are already running inside ` +
      `${error.functionName}. Do NOT call '${toolName}' again: do the work directly with the lower-level tools, ` +
      `or answer with what you have. Another refused call ends the whole run.`
    );
  }
  if (CycleError.isInstance(error)) {
    return (
      `Refused: ${error.message}. Calling '${toolName}' would repeat the cycle ${error.cycle.join(" → ")} again. ` +
      `Finish the work here directly, or answer with what you have. Another refused call ends the whole run.`
    );
  }
  if (ChainDepthError.isInstance(error)) {
    return (
      `Refused: ${error.message}. The call chain is too deep to call '${toolName}'. ` +
      `Answer with what you have. Another refused call ends the whole run.`
    );
  }
  return `Refused: ${error.message}. Do not call '${toolName}' again; answer with what you have. Another refused call ends the whole run.`;
}

/** What the model sees of a tool's value: text, or the blocks of a {@link ToolContent} (an MCP tool's images). */
function resultContent(value: unknown, maxChars: number | undefined): ToolResultBlock["content"] {
  const blocks = toolContentBlocks(value);
  if (blocks === undefined) return resultText(value, maxChars);
  // Text alone is sent as text, as any other tool's result.
  if (blocks.every((block) => block.type === "text")) return resultText(blocks.map((block) => block.text).join("\n"), maxChars);
  return maxChars === undefined ? blocks : blocks.map((block) => (block.type === "text" ? { type: "text", text: resultText(block.text, maxChars) } : block));
}

function resultText(value: unknown, maxChars: number | undefined): string {
  let text: string;
  if (typeof value === "string") text = value;
  else if (value === undefined) text = "(no result)";
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  if (maxChars !== undefined && text.length > maxChars) {
    text = `${text.slice(0, maxChars)}… [truncated: ${text.length - maxChars} more characters]`;
  }
  return text;
}
