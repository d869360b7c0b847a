import * as guard from "@rein/guard";
import { ChainDepthError, CycleError, GuardError, RecursionError, UnknownToolError } from "@rein/guard";
import { MaxStepsExceededError, MissingProviderError, ToolArgumentsError } from "../errors/core-errors";
import { isCancellation } from "../scope/enter-scope";
import type { ToolResultBlock, ToolUseBlock } from "../model/content";
import { ProviderError } from "../model/provider-errors";
import type { CallScope } from "../scope/call-scope";
import type { Tool } from "../tools/tool";
import type { Execution } from "./execution";
import type { LoopGuard } from "./loop-guard";

const withFrameData = guard.withFrameData;

/** What a tool call needs from the loop running it. */
export interface ToolCallSite {
  readonly execution: Execution;
  /** The scope the loop runs in; nodes of the call link to it. */
  readonly owner: CallScope;
  /** The llm node that asked for the call. */
  readonly requestedBy: string | null;
  readonly tools: ReadonlyMap<string, Tool>;
  readonly signal: AbortSignal | undefined;
  readonly loopGuard: LoopGuard;
}

/**
 * Runs one tool call from the model and returns its result block. Bad input
 * (malformed arguments, an unknown tool, arguments that fail the schema) and
 * tool failures become error results the model sees. A guard refusal is
 * reported to the model once per run; the second one aborts the whole run.
 * Errors that end the run (step budget, cancellation, provider failures, an
 * earlier abort) propagate.
 */
export async function runToolCall(call: ToolUseBlock, site: ToolCallSite): Promise<ToolResultBlock> {
  const { execution } = site;
  const fail = (message: string): ToolResultBlock => {
    execution.emit({ type: "tool-error", toolName: call.name, toolCallId: call.id, message });
    execution.logger.info({ tool: call.name, toolCallId: call.id }, message);
    return { type: "tool_result", toolUseId: call.id, content: message, isError: true };
  };

  const { loopGuard } = site;
  const tool = site.tools.get(call.name);
  // Loop detection sees every call, including malformed and unknown ones (which count toward unknown_tool_repeat).
  const blocked = loopGuard.before(call, tool?.poll ?? false);
  if (blocked !== undefined) {
    loopGuard.after(call, { result: { status: "blocked", reason: "tool-loop" } });
    return blocked;
  }
  if (call.inputError !== undefined) {
    loopGuard.after(call, { error: new Error(call.inputError) });
    return fail(
      `Tool '${call.name}' was called with malformed arguments (${call.inputError}). ` +
        `Call it again with one JSON object that matches its parameters schema.`,
    );
  }
  if (tool === undefined) {
    const names = [...site.tools.keys()];
    loopGuard.after(call, { error: new UnknownToolError(call.name, names) });
    return fail(
      `Unknown tool '${call.name}'. ` +
        (names.length > 0 ? `Available tools: ${names.join(", ")}. Call one of those, or answer directly.` : "No tools are available here; answer directly."),
    );
  }

  execution.emit({ type: "tool-call", toolName: call.name, toolCallId: call.id, input: call.input });
  const toolScope: CallScope = {
    ...site.owner,
    execution,
    // The loop's tail: the model turn for the first call, then the previous call, so calls chain.
    tail: site.owner.tail,
    toolCall: { id: call.id, name: call.name, requestedBy: site.requestedBy },
  };
  try {
    const value = await withFrameData(toolScope, () => tool.execute(call.input, { signal: site.signal }));
    site.owner.tail = toolScope.tail;
    loopGuard.after(call, { result: value });
    execution.emit({ type: "tool-result", toolName: call.name, toolCallId: call.id });
    return { type: "tool_result", toolUseId: call.id, content: resultText(value, tool.maxResultChars) };
  } catch (error) {
    site.owner.tail = toolScope.tail;
    if (error === execution.abortError || endsTheRun(error)) throw error;
    loopGuard.after(call, { error });
    if (GuardError.isInstance(error)) {
      execution.refusals++;
      const aborted = execution.refusals >= 2;
      execution.emit({ type: "guard-refusal", toolName: call.name, toolCallId: call.id, error, aborted });
      execution.logger.warn({ tool: call.name, refusals: execution.refusals, aborted }, error.message);
      if (aborted) throw execution.abort(error);
      return { type: "tool_result", toolUseId: call.id, content: refusalMessage(error, call.name), isError: true };
    }
    if (ToolArgumentsError.isInstance(error)) {
      return fail(`${error.message}. Call '${call.name}' again with arguments matching its schema.`);
    }
    return fail(`Tool '${call.name}' failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function endsTheRun(error: unknown): boolean {
  return (
    isCancellation(error) ||
    MaxStepsExceededError.isInstance(error) ||
    ProviderError.isInstance(error) ||
    MissingProviderError.isInstance(error)
  );
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
