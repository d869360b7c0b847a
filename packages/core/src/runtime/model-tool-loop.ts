import * as guard from "@rein/guard";
import { ContextOverflowError, currentChain, depthOf, ReachRun, situationalPrefix, MaxIterationsExceededError, OutputValidationError } from "@rein/guard";
import { Context } from "../context/context";
import { textBlock, textOf, type ContentBlock, type Message, type ToolResultBlock } from "../model/content";
import type { ModelRequest, ToolChoice, Usage } from "../model/model-provider";
import { currentScope, deriveScope, newNodeId, type CallScope } from "../scope/call-scope";
import { checkSameWriter, topLevelPredecessor } from "../scope/enter-scope";
import { SessionCursor } from "../scope/session-cursor";
import { abortReason, CancellationRegion, joinSignals } from "./cancellation";
import { raceRunLimits } from "./call-limit";
import { compactConversation } from "./compaction";
import { Execution } from "./execution";
import type { ExecRequest } from "./exec-request";
import { historyMessages } from "./history-messages";
import { LoopGuard } from "./loop-guard";
import type { LoopSettings } from "./loop-settings";
import { RunEvents } from "./run-events";
import { RunLedger } from "./run-ledger";
import { estimateTokens, sendModelRequest, type RequestSite } from "./model-request-gate";
import { executeToolCall, type ToolCallSite } from "./tool-execution";
import { readStructuredAnswer, repairPrompt, resolveResponseFormat } from "./response-format";
import type { PausedRun } from "./turn-pause";
import { activeTracer, endSpanWith, startAgentSpan, withActiveSpan, type TraceScope } from "../telemetry/tracing";
import { usageAttributes, type LoopTracing } from "../telemetry/loop-spans";
import type { ExecResult, LoopOutcome } from "./exec-result";
import { committedRun, finishedRun } from "./finished-run";
import { offeredTools } from "./offered-tools";

export type { ExecResult } from "./exec-result";

/** Compactions one loop may do before a context overflow is final. */
const MAX_COMPACTIONS = 3;

const withFrameData = guard.withFrameData;

/**
 * Runs one model-tool loop with settings resolved for it (see
 * {@link Runtime.exec}). Inside a running call it joins that call's
 * execution (shared step budget and refusals) and reports to its own
 * runtime's listener and every one up the chain; otherwise it starts a
 * standalone execution.
 */
export function runModelToolLoop(settings: LoopSettings, request: ExecRequest): Promise<ExecResult> {
  const scope = currentScope();
  const execution = scope?.execution ?? new Execution();
  const steps = execution.budget(settings.maxSteps, scope?.steps);
  const agent = request.agent ?? scope?.events?.agent ?? "";
  let events = scope?.events?.nested(settings.logger, settings.onEvent, agent) ?? RunEvents.root(settings.logger, settings.onEvent, agent);
  if (request.listener !== undefined) events = events.withListener(request.listener.deliver, request.listener.gate);
  const context = request.context ?? scope?.context ?? new Context();
  // Inside a scope on the same Context, its writer decides (undefined under a hidden call).
  let writer = scope !== undefined && scope.context === context ? scope.writer : context.store;
  if (writer !== undefined && scope?.suppressed === writer) writer = undefined;
  const signal = joinSignals(request.signal, scope?.signal);
  const region = signal === scope?.signal ? scope?.region : new CancellationRegion(signal!);
  if (writer !== undefined && (region?.closed ?? false)) writer = undefined;
  let base: SessionCursor | undefined;
  let cursor: SessionCursor | undefined;
  try {
    if (writer !== undefined) {
      checkSameWriter(scope, writer);
      // Each loop writes on its own branch of its call, so two loops running at once never interleave their nodes.
      base = scope?.cursor?.writer === writer ? scope.cursor : undefined;
      cursor = base?.fork() ?? new SessionCursor(writer, null, topLevelPredecessor(writer, context), new Set());
    }
  } catch (error) {
    if (region !== scope?.region) region?.dispose();
    return Promise.reject(error);
  }
  // Tracing: a loop of an agent not yet inside its own invoke_agent span (a top-level ask) opens one.
  const tracer = activeTracer();
  let tracing: LoopTracing | undefined;
  let agentSpan: TraceScope | undefined;
  if (tracer !== undefined) {
    tracing = { tracer, captureContent: settings.captureContent };
    if (agent !== "" && scope?.trace?.agent !== agent) {
      const span = startAgentSpan(tracer, scope, agent, { sessionId: cursor?.writer.sessionId, model: request.model ?? settings.model });
      agentSpan = { tracer, span, agent };
    }
  }
  // This run's own ledger: what it uses is charged here and rolls up to the run it is nested in.
  const ledger = new RunLedger(scope?.ledger, settings.pricing ?? scope?.ledger?.pricing);
  const owner = deriveScope(scope);
  owner.context = context;
  owner.execution = execution;
  owner.events = events;
  owner.writer = writer;
  owner.cursor = cursor;
  owner.signal = signal;
  owner.region = region;
  owner.steps = steps;
  // A run under no caller's reach starts its own when the runtime has a policy.
  owner.reach = scope?.reach ?? (settings.reach === undefined ? undefined : new ReachRun(settings.reach));
  owner.ledger = ledger;
  owner.limits = settings.chainLimits ?? scope?.limits;
  owner.trace = agentSpan ?? scope?.trace;
  if (events.listening) events.emit({ type: "run-start", model: request.model ?? settings.model ?? "" });
  let looped =
    agentSpan === undefined
      ? withFrameData(owner, loop, settings, request, execution, owner, events, tracing)
      : withActiveSpan(agentSpan.span, () => withFrameData(owner, loop, settings, request, execution, owner, events, tracing));
  // A top-level run is acknowledged when it returns: its nodes are committed first (a failure to commit them fails it).
  if (cursor?.written !== undefined) looped = committedRun(looped, cursor as SessionCursor & { written: Set<string> });
  let run = finishedRun(looped, { ledger, events, cursor, signal, onFinish: request.onFinish });
  if (agentSpan !== undefined) {
    const { span } = agentSpan;
    run = endSpanWith(span, () => run.then((result) => {
      if (span.isRecording()) span.setAttributes(usageAttributes(result.run.usage));
      return result;
    }));
  }
  if (base === undefined && region === scope?.region) return run;
  return run.finally(() => {
    // The call's tail moves to where this loop ended: after concurrent loops, the one that finished last.
    if (base !== undefined) base.join(cursor!);
    if (region !== scope?.region) region?.dispose();
  });
}

async function loop(
  settings: LoopSettings,
  request: ExecRequest,
  execution: Execution,
  owner: CallScope,
  events: RunEvents,
  tracing: LoopTracing | undefined,
): Promise<LoopOutcome> {
  const { context, cursor, signal, region } = owner;
  const steps = owner.steps!;
  const provider = settings.provider();
  const model = request.model ?? settings.model ?? provider.modelId;
  const maxIterations = request.maxIterations ?? settings.maxIterations;
  const { offered, withheld } = offeredTools(request.tools ?? []);
  const specs = [...offered.values()].map((tool) => tool.spec);
  const system = request.system ?? "";
  const fn = owner.fn;
  /** Records only while the run goes on: abandoned work writes nothing after a cancel. */
  const recorder = (): SessionCursor | undefined => (region?.closed === true ? undefined : cursor);

  const resume = request.turn?.resume;
  // A resumed run re-sends the paused assistant turn and its results itself: history renders only the request's input.
  const resumes = resume?.requestedBy ?? undefined;
  // The turn's own requests are rendered whatever the history filter says (as the loop keeps them in memory until it pauses).
  let turnStart = resume?.turnStart ?? undefined;
  const history = cursor === undefined ? [] : historyMessages(cursor.writer, context, { callId: cursor.callId, tail: cursor.tail, resumes, turnStart });
  if (resume !== undefined && resumes === undefined && history[history.length - 1]?.role === "assistant") history.pop();
  // A trailing user turn of the history joins the new one; its tool results must still lead it.
  const carried = history[history.length - 1]?.role === "user" ? (history.pop() as Message).content : [];
  const carriedResults = carried.filter((block) => block.type === "tool_result");
  const carriedOther = carried.filter((block) => block.type !== "tool_result");
  const content: ContentBlock[] = typeof request.content === "string" ? [textBlock(request.content)] : [...request.content];
  // Guided as the tool the model sees: a tool method's scoped helper that asks is still inside that tool.
  const guided = owner.tool ?? fn;
  const leading: ContentBlock[] =
    guided === undefined ? [] : [textBlock(situationalPrefix(guided.name, guided.doc, { ...situation(settings.recursionLimit, guided.name), toolName: guided.toolName }))];
  // Context providers are user code that may hang: raced like any other pending work of the run (its signal, its deadline).
  if (aborted(signal)) throw abortReason(signal!);
  const contextBlocks = await raceRunLimits(context.render(), signal, owner.reach);
  const opening: ContentBlock[] = [...carriedResults, ...leading, ...contextBlocks, ...carriedOther, ...content];
  let messages: Message[] = resume === undefined ? [...history, { role: "user", content: opening }] : [...history, { role: "user", content: [...carriedResults, ...carriedOther] }];
  const loopGuard = new LoopGuard(execution, events, settings.loopDetection);
  loopGuard.restore(resume);
  // One structured-output repair per turn: a resumed turn goes on from its pause's count.
  let repaired = resume?.repaired === true;
  // What a pause keeps beside where it stopped: the loop guard's state, where the turn began, whether its answer was repaired.
  const kept = () => ({ ...loopGuard.carried(), turnStart, repaired });
  const gate: RequestSite = { provider, execution, steps, events, scope: owner, ledger: owner.ledger!, tracing, recorder };
  let compactions = 0;
  const compact = async (): Promise<boolean> => {
    if (compactions >= MAX_COMPACTIONS) return false;
    // The restart turn keeps the situational prefix and the Context's blocks: a summary must not drop the rules.
    const compacted = await compactConversation(messages, [...leading, ...contextBlocks], { site: gate, model, logger: events.logger });
    if (compacted === undefined) return false;
    compactions++;
    messages = compacted.messages;
    const at = recorder();
    const summaryNodeId = at === undefined ? undefined : appendSummaryNode(at, compacted.summary, compacted.truncated);
    events.emit({ type: "context-compacted", removedMessages: compacted.removed, summaryNodeId });
    events.logger.info({ removed: compacted.removed, truncated: compacted.truncated }, "context compacted");
    loopGuard.armAfterCompaction();
    return true;
  };

  if (resume !== undefined) {
    resume.onStart?.();
    // The paused assistant turn, then its results: those already run, the approved (or refused) call, and the rest.
    messages.push({ role: "assistant", content: resume.assistant });
    const site: ToolCallSite = {
      execution,
      events,
      scope: owner,
      requestedBy: resume.requestedBy,
      offered,
      withheld,
      signal,
      loopGuard,
      tracing,
      approved: new Set(resume.reason === "approval" && resume.approve ? [resume.pending[0]!.id] : []),
    };
    const results: ToolResultBlock[] = [...resume.results];
    for (const [index, call] of resume.pending.entries()) {
      if (index === 0 && resume.reason === "approval" && !resume.approve) {
        results.push({ type: "tool_result", toolUseId: call.id, content: `Calling '${call.name}' was not approved; do not call it again for this.`, isError: true });
        continue;
      }
      if (index > 0 && offered.get(call.name)?.awaitsApproval === true) {
        return paused({ reason: "approval", requestedBy: resume.requestedBy, assistant: resume.assistant, results, pending: resume.pending.slice(index), ...kept() });
      }
      results.push(await executeToolCall(call, site));
    }
    const previous = messages[messages.length - 2];
    if (previous?.role === "user" && previous.content.length === 0) messages.splice(messages.length - 2, 1);
    // The paused turn's opening (its Context blocks) is not in the history rebuilt from the session: rendered again here.
    messages.push({ role: "user", content: [...results, ...loopGuard.takeNotices(), ...(await raceRunLimits(context.render(), signal, owner.reach))] });
  }
  const format = request.responseFormat === undefined ? undefined : resolveResponseFormat(request.responseFormat, "ask");
  // Requests of one conversation share their prefix: providers that route by a key keep them on one cache.
  const cacheKey = cursor?.writer.sessionId;
  let recordedInput: readonly ContentBlock[] = resume === undefined ? content : (messages[messages.length - 1]!.content as ContentBlock[]);
  let toolChoice: ToolChoice | undefined = request.toolChoice;
  let usage: Usage = { inputTokens: 0, outputTokens: 0 };
  for (let iteration = 1; iteration <= maxIterations; iteration++) {
    if (execution.aborted) throw execution.abortError;
    if (aborted(signal)) throw abortReason(signal!);
    if (settings.maxContextTokens !== undefined && estimateTokens(system, messages, specs) > settings.maxContextTokens) {
      await compact();
    }
    // Input steered in since the last request joins this one's user turn: between requests, never mid-tool.
    const steered = request.steering?.();
    if (steered !== undefined && steered.length > 0) {
      const blocks = steered.map((text) => textBlock(text));
      const last = messages[messages.length - 1]!;
      messages[messages.length - 1] = { role: last.role, content: [...last.content, ...blocks] };
      recordedInput = [...recordedInput, ...blocks];
    }
    // Every request goes through the run's one gate: step budget, reach budget (the request that would
    // cross the token, cost or time budget is never sent), span, llm node, ledger, events.
    const modelRequest: ModelRequest = { model, system, messages: [...messages], tools: specs, toolChoice, effort: request.effort, cacheKey };
    let answered;
    try {
      answered = await sendModelRequest(gate, {
        request: format === undefined ? modelRequest : { ...modelRequest, responseFormat: format.wire },
        stream: true,
        recordedInput,
      });
    } catch (error) {
      // A context overflow compacts the oldest history and retries; anything else ends the loop.
      if (!aborted(signal) && ContextOverflowError.isInstance(error) && (await compact())) continue;
      throw error;
    }
    const { response, llmId } = answered;
    turnStart ??= llmId;
    usage = addUsage(usage, response.usage);
    messages.push({ role: "assistant", content: response.content });

    const calls = response.content.filter((block) => block.type === "tool_use");
    if (calls.length === 0) {
      const text = textOf(response.content);
      const outcome = { text, content: response.content, stopReason: response.stopReason, usage, requests: iteration };
      if (format === undefined) return outcome;
      const read = await readStructuredAnswer(text, format);
      if (read.ok) return { ...outcome, output: read.value };
      if (repaired) throw new OutputValidationError(read.problems, text);
      // One repair request, naming what was wrong, that asks for the final answer itself: a tool
      // choice naming the format forces Anthropic's format tool and means "no tools" to OpenAI.
      repaired = true;
      toolChoice = { type: "tool", name: format.wire.name };
      const repair: ContentBlock[] = [textBlock(repairPrompt(read.problems, format))];
      messages.push({ role: "user", content: repair });
      recordedInput = repair;
      continue;
    }
    // A forced choice applies to the first request only, or the model could never finish.
    if (toolChoice === "required" || typeof toolChoice === "object") toolChoice = undefined;
    const site: ToolCallSite = { execution, events, scope: owner, requestedBy: llmId ?? null, offered, withheld, signal, loopGuard, tracing };
    const results: ToolResultBlock[] = [];
    for (const [index, call] of calls.entries()) {
      // In a turn, a call that needs a person's approval pauses the run before it runs.
      if (request.turn !== undefined && offered.get(call.name)?.awaitsApproval === true) {
        return paused({ reason: "approval", requestedBy: llmId ?? null, assistant: response.content, results, pending: calls.slice(index), ...kept() }, usage, iteration);
      }
      results.push(await executeToolCall(call, site));
    }
    // A turn asked to pause stops here, at a safe point: every call of this step has run, the next request is not made.
    if (request.turn?.pauseRequested?.() === true) {
      return paused({ reason: "pause", requestedBy: llmId ?? null, assistant: response.content, results, pending: [], ...kept() }, usage, iteration);
    }
    // Tool results must lead the user turn (the APIs require it); loop warnings come next, then provider values.
    messages.push({
      role: "user",
      content: [...results, ...loopGuard.takeNotices(), ...(await raceRunLimits(context.render({ includeStatic: false }), signal, owner.reach))],
    });
    recordedInput = results;
  }
  throw new MaxIterationsExceededError(maxIterations);
}

/** Read through a call, so the compiler does not assume a signal stays as it was before an await. */
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/** A turn that stops here, to be carried on by `resumeTurn`: an outcome, not an exception. */
function paused(state: PausedRun, usage: Usage = { inputTokens: 0, outputTokens: 0 }, requests = 0): LoopOutcome {
  return { text: "", content: state.assistant, stopReason: "tool_use", usage, requests, paused: state };
}

/** The call path, and the depth of the guided function: its innermost frame on the chain (else the innermost frame). */
function situation(recursionLimit: number, guided: string): { callPath: string[]; position?: string } {
  const chain = currentChain();
  let at = chain.length - 1;
  while (at > 0 && chain[at]!.name !== guided) at--;
  const frame = chain[at]?.name === guided ? chain[at] : chain[chain.length - 1];
  if (frame === undefined) return { callPath: [] };
  return {
    callPath: chain.map((entry) => entry.name),
    position: `nesting depth ${depthOf(frame.key)} of at most ${recursionLimit} for ${frame.name}`,
  };
}

function appendSummaryNode(cursor: SessionCursor, summary: string, truncated: boolean): string {
  return cursor.append({
    id: newNodeId(),
    role: "code",
    name: "Runtime.compact",
    input: null,
    output: summary,
    metadata: { status: "completed", kind: "compaction", truncated },
  });
}

function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cachedInputTokens: (a.cachedInputTokens ?? 0) + (b.cachedInputTokens ?? 0),
    cacheCreationInputTokens: (a.cacheCreationInputTokens ?? 0) + (b.cacheCreationInputTokens ?? 0),
  };
}
