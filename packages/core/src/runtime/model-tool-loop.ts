import * as guard from "@rein/guard";
import { currentChain, depthOf, deniedTools, MAX_AGENTIC_RECURSION_DEPTH, situationalPrefix } from "@rein/guard";
import { Context } from "../context/context";
import { MaxIterationsExceededError } from "../errors/core-errors";
import { textBlock, textOf, type ContentBlock, type Message, type ToolResultBlock } from "../model/content";
import type { ModelResponse, StopReason, ToolChoice, Usage } from "../model/model-provider";
import { currentScope, newNodeId, toRecordable, type CallScope } from "../scope/call-scope";
import { checkSameWriter, topLevelPredecessor } from "../scope/enter-scope";
import type { SessionNodeWriter } from "../session/session-node-writer";
import type { Tool } from "../tools/tool";
import { Execution } from "./execution";
import { historyMessages } from "./history-messages";
import type { ExecRequest, Runtime } from "./runtime";
import { runToolCall } from "./tool-call-runner";
import { compactConversation } from "./compaction";
import { LoopGuard } from "./loop-guard";
import { ContextOverflowError } from "../model/provider-errors";

/** Compactions one loop may do before a context overflow is final. */
const MAX_COMPACTIONS = 3;

const withFrameData = guard.withFrameData;

/** What one model-tool loop resolves with. */
export interface ExecResult {
  /** The final answer's text. */
  readonly text: string;
  /** The final assistant turn. */
  readonly content: readonly ContentBlock[];
  readonly stopReason: StopReason;
  /** Tokens used by this loop's requests (not its nested runs'). */
  readonly usage: Usage;
  /** Model requests made by this loop. */
  readonly requests: number;
}

/** Runs one loop; see {@link Runtime.exec}. */
export function runModelToolLoop(runtime: Runtime, request: ExecRequest): Promise<ExecResult> {
  const scope = currentScope();
  const execution = scope?.execution ?? new Execution(runtime.maxSteps, runtime.logger, runtime.onEvent, request.signal);
  const context = request.context ?? scope?.context ?? new Context();
  // Inside a scope on the same Context, its writer decides (undefined under a hidden call).
  let writer = scope !== undefined && scope.context === context ? scope.writer : context.store;
  if (writer !== undefined && scope?.suppressed === writer) writer = undefined;
  if (writer !== undefined) checkSameWriter(scope, writer);
  const linked = scope !== undefined && scope.writer === writer && scope.nodeId !== undefined;
  // Each loop keeps its own tail, so two loops running at once in one call never interleave their nodes.
  const owner: CallScope = linked
    ? { ...scope, context, execution, tail: scope.tail, toolCall: undefined }
    : {
        context,
        execution,
        fn: scope?.fn,
        writer,
        nodeId: undefined,
        tail: writer === undefined ? null : topLevelPredecessor(writer, context),
        toolCall: undefined,
        suppressed: scope?.suppressed,
      };
  const signal = joinSignals(request.signal, execution.signal);
  const run = withFrameData(owner, loop, runtime, request, execution, owner, context, writer, signal);
  if (!linked) return run;
  return run.finally(() => {
    scope.tail = owner.tail;
  });
}

function joinSignals(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  if (a === undefined || a === b) return b;
  if (b === undefined) return a;
  return AbortSignal.any([a, b]);
}

async function loop(
  runtime: Runtime,
  request: ExecRequest,
  execution: Execution,
  owner: CallScope,
  context: Context,
  writer: SessionNodeWriter | undefined,
  signal: AbortSignal | undefined,
): Promise<ExecResult> {
  const provider = runtime.provider;
  const model = request.model ?? runtime.model ?? provider.modelId;
  const maxIterations = request.maxIterations ?? runtime.maxIterations;
  const tools = toolMap(request.tools ?? []);
  const denied = deniedTools();
  const specs = [...tools.values()].filter((tool) => !denied.includes(tool.spec.name)).map((tool) => tool.spec);
  const system = request.system ?? "";
  const fn = owner.fn;

  const history = writer === undefined ? [] : historyMessages(writer, context, { callId: owner.nodeId ?? null, tail: owner.tail });
  // A trailing user turn of the history joins the new one; its tool results must still lead it.
  const carried = history[history.length - 1]?.role === "user" ? (history.pop() as Message).content : [];
  const carriedResults = carried.filter((block) => block.type === "tool_result");
  const carriedOther = carried.filter((block) => block.type !== "tool_result");
  const content: ContentBlock[] = typeof request.content === "string" ? [textBlock(request.content)] : [...request.content];
  const leading: ContentBlock[] = fn === undefined ? [] : [textBlock(situationalPrefix(fn.name, fn.doc, { ...situation(runtime), toolName: fn.toolName }))];
  const opening: ContentBlock[] = [...carriedResults, ...leading, ...(await context.render()), ...carriedOther, ...content];
  let messages: Message[] = [...history, { role: "user", content: opening }];
  const { config, userEnabled } = LoopGuard.resolve(runtime.loopDetection, request.loopDetection);
  const loopGuard = new LoopGuard(execution, config, userEnabled);
  let compactions = 0;
  const compact = async (): Promise<boolean> => {
    if (compactions >= MAX_COMPACTIONS) return false;
    const compacted = await compactConversation(messages, leading, { provider, model, execution, signal });
    if (compacted === undefined) return false;
    compactions++;
    messages = compacted.messages;
    const summaryNodeId = writer === undefined ? undefined : appendSummaryNode(writer, owner, compacted.summary, compacted.truncated);
    execution.emit({ type: "context-compacted", removedMessages: compacted.removed, summaryNodeId });
    execution.logger.info({ removed: compacted.removed, truncated: compacted.truncated }, "context compacted");
    loopGuard.armAfterCompaction();
    return true;
  };

  let recordedInput: readonly ContentBlock[] = content;
  let toolChoice: ToolChoice | undefined = request.toolChoice;
  let usage: Usage = { inputTokens: 0, outputTokens: 0 };
  for (let iteration = 1; iteration <= maxIterations; iteration++) {
    if (execution.abortError !== undefined) throw execution.abortError;
    signal?.throwIfAborted();
    if (runtime.maxContextTokens !== undefined && estimateTokens(system, messages, specs) > runtime.maxContextTokens) {
      await compact();
    }
    const step = execution.step();
    execution.emit({ type: "model-request", step, model, functionName: fn?.name });
    let response: ModelResponse;
    try {
      const answer = await provider.complete(
        { model, system, messages: [...messages], tools: specs, toolChoice, effort: request.effort },
        { signal },
      );
      response = { ...answer, content: checkedToolCalls(answer.content) };
    } catch (error) {
      if (writer !== undefined) recordLlmNode(writer, execution, owner, model, recordedInput, undefined, error);
      // A context overflow compacts the oldest history and retries; anything else ends the loop.
      if (ContextOverflowError.isInstance(error) && (await compact())) continue;
      throw error;
    }
    // One write per request, once it is answered: an unanswered request has nothing to keep.
    const llmId = writer === undefined ? undefined : recordLlmNode(writer, execution, owner, model, recordedInput, response, undefined);
    execution.emit({ type: "model-response", step, stopReason: response.stopReason, usage: response.usage });
    usage = addUsage(usage, response.usage);
    messages.push({ role: "assistant", content: response.content });

    const calls = response.content.filter((block) => block.type === "tool_use");
    if (calls.length === 0) {
      return { text: textOf(response.content), content: response.content, stopReason: response.stopReason, usage, requests: iteration };
    }
    // A forced choice applies to the first request only, or the model could never finish.
    if (toolChoice === "required" || typeof toolChoice === "object") toolChoice = undefined;
    const results: ToolResultBlock[] = [];
    for (const call of calls) {
      results.push(await runToolCall(call, { execution, owner, requestedBy: llmId ?? null, tools, signal, loopGuard }));
    }
    // Tool results must lead the user turn (the APIs require it); loop warnings come next, then provider values.
    messages.push({
      role: "user",
      content: [...results, ...loopGuard.takeNotices(), ...(await context.render({ includeStatic: false }))],
    });
    recordedInput = results;
  }
  throw new MaxIterationsExceededError(maxIterations);
}

function situation(runtime: Runtime): { callPath: string[]; position?: string } {
  const chain = currentChain();
  const innermost = chain[chain.length - 1];
  if (innermost === undefined) return { callPath: [] };
  const limit = runtime.limits?.recursionLimit ?? MAX_AGENTIC_RECURSION_DEPTH;
  return {
    callPath: chain.map((frame) => frame.name),
    position: `nesting depth ${depthOf(innermost.key)} of at most ${limit} for ${innermost.name}`,
  };
}

function toolMap(tools: readonly Tool[]): Map<string, Tool> {
  const map = new Map<string, Tool>();
  for (const tool of tools) {
    if (map.has(tool.spec.name)) {
      throw new TypeError(`Two tools are named '${tool.spec.name}'; tool names must be unique within one request`);
    }
    map.set(tool.spec.name, tool);
  }
  return map;
}

/** Writes the llm node of one answered (or failed) request and commits: nothing acknowledged may be lost. */
function recordLlmNode(
  writer: SessionNodeWriter,
  execution: Execution,
  owner: CallScope,
  model: string,
  input: readonly ContentBlock[],
  response: ModelResponse | undefined,
  error: unknown,
): string {
  const id = newNodeId();
  const status = response !== undefined ? "completed" : "error";
  const node = {
    id,
    role: "llm" as const,
    name: model,
    input: { content: input } as unknown,
    output: response === undefined ? undefined : ({ content: response.content } as unknown),
    caller: owner.nodeId ?? null,
    predecessor: owner.tail,
    metadata:
      response !== undefined
        ? { status, model: response.model ?? model, usage: response.usage, stopReason: response.stopReason }
        : { status, model, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) },
  };
  try {
    // Model turns are built by the runtime from parsed provider JSON and never mutated: no snapshot needed.
    writer.append(node, { owned: true });
  } catch (failure) {
    // Content that is not JSON (say, tool arguments nested too deep to serialise) is kept readable, never fatal.
    if (!(failure instanceof TypeError)) throw failure;
    writer.append({ ...node, input: toRecordable(node.input), output: toRecordable(node.output) });
  }
  owner.tail = id;
  writer.flush();
  execution.emit({ type: "node-end", nodeId: id, role: "llm", name: model, status });
  return id;
}

/** Deeper arguments than any tool schema needs; they are refused before they can overflow a serialiser. */
const MAX_ARGUMENT_DEPTH = 64;

/**
 * Makes an assistant turn safe to act on and to send back: repeated
 * tool_use ids are renamed so each call gets exactly one result, and
 * arguments nested deeper than {@link MAX_ARGUMENT_DEPTH} are replaced by
 * `{}` with an `inputError` (the model gets a tool error, not a crash).
 */
function checkedToolCalls(content: readonly ContentBlock[]): readonly ContentBlock[] {
  const seen = new Set<string>();
  let changed = false;
  const checked = content.map((block) => {
    if (block.type !== "tool_use") return block;
    let id = block.id;
    for (let n = 2; seen.has(id); n++) id = `${block.id}_${n}`;
    seen.add(id);
    const tooDeep = depthExceeds(block.input, MAX_ARGUMENT_DEPTH);
    if (id === block.id && !tooDeep) return block;
    changed = true;
    return tooDeep
      ? { ...block, id, input: {}, inputError: `arguments are nested deeper than ${MAX_ARGUMENT_DEPTH} levels` }
      : { ...block, id };
  });
  return changed ? checked : content;
}

/** Whether `value` nests objects/arrays deeper than `limit` (iterative: safe on any depth). */
function depthExceeds(value: unknown, limit: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (depth > limit) return true;
    for (const child of Object.values(item as object)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

function appendSummaryNode(writer: SessionNodeWriter, owner: CallScope, summary: string, truncated: boolean): string {
  const id = newNodeId();
  writer.append({
    id,
    role: "code",
    name: "Runtime.compact",
    input: null,
    output: summary,
    caller: owner.nodeId ?? null,
    predecessor: owner.tail,
    metadata: { status: "completed", kind: "compaction", truncated },
  });
  owner.tail = id;
  return id;
}

/** A rough token estimate (4 characters a token) used only against `maxContextTokens`. */
function estimateTokens(system: string, messages: readonly Message[], tools: readonly unknown[]): number {
  return Math.ceil((system.length + JSON.stringify(messages).length + JSON.stringify(tools).length) / 4);
}

function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cachedInputTokens: (a.cachedInputTokens ?? 0) + (b.cachedInputTokens ?? 0),
    cacheCreationInputTokens: (a.cacheCreationInputTokens ?? 0) + (b.cacheCreationInputTokens ?? 0),
  };
}
