import { types } from "node:util";
import type { ContentBlock, Message } from "../model/content";
import type { ModelCallOptions, ModelProvider, ModelRequest, ModelResponse } from "../model/model-provider";
import { newNodeId, toRecordable, type CallScope } from "../scope/call-scope";
import type { SessionCursor } from "../scope/session-cursor";
import { ProviderError, describeError, priceOf, type ModelPrice } from "@rein/guard";
import { answerChatSpan, startChatSpan, type LoopTracing } from "../telemetry/loop-spans";
import { failSpan } from "../telemetry/tracing";
import { CallLimit } from "./call-limit";
import { abortReason, raceSignal } from "./cancellation";
import type { Execution, StepBudget } from "./execution";
import { modelCallOptions } from "./model-retry-reporter";
import type { RunEvents } from "./run-events";
import type { RunLedger } from "./run-ledger";
import { chargeReportedUsage, chargeUsage, reachPricing, reserveWithin, spendOf, unanswered, type RequestProgress } from "./request-charge";
import { DEFAULT_RESERVED_OUTPUT_TOKENS, type SpendAmount, type SpendReservation, type SpendReserver } from "./spend-reserver";

/**
 * What every model request of one loop goes through, fixed when the loop
 * starts: its provider, the shared step budget, the loop's scope (reach
 * budget, signal), its run ledger, its events and spans.
 * @internal
 */
export interface RequestSite {
  readonly provider: ModelProvider;
  readonly execution: Execution;
  readonly steps: StepBudget;
  readonly events: RunEvents;
  /** The loop's scope: its reach run and depth, its signal, its function. */
  readonly scope: CallScope;
  /** The loop's run: charged with every request the provider counted, and its ancestors with it. */
  readonly ledger: RunLedger;
  readonly tracing: LoopTracing | undefined;
  /** Where the llm node of a request goes, read per request (nothing once the run was cancelled). */
  readonly recorder: () => SessionCursor | undefined;
}

/** One request to send through {@link sendModelRequest}. @internal */
export interface GatedRequest {
  readonly request: ModelRequest;
  /** Streams text deltas to listeners while it is answered (when anyone listens and the provider can). */
  readonly stream: boolean;
  /**
   * The new user content, recorded as the llm node's input; undefined
   * records no llm node (a compaction summary is recorded as its own
   * `Runtime.compact` node instead, which history shows in place of what it replaced).
   */
  readonly recordedInput: readonly ContentBlock[] | undefined;
}

/** What {@link sendModelRequest} resolves with. @internal */
export interface GatedResponse {
  readonly response: ModelResponse;
  /** The llm node the request was recorded as. */
  readonly llmId: string | undefined;
  /** Its number in the run's step budget. */
  readonly step: number;
}

/**
 * The one gate every model request of a run passes — a loop turn, a
 * compaction summary, a structured-output repair. In order: the run's
 * signal and abort, one step of the shared `maxSteps` budget, the reach
 * token/cost/deadline budget (the request that would cross it is never
 * sent), the `model-request` event, the `chat <model>` span, the provider
 * (raced against the signal and the reach deadline), the llm node, the
 * charge to the run's ledger (and its ancestors') and to the reach budget,
 * the `model-response` and `reach-status` events. No other code calls a
 * provider. When the run has a {@link SpendReserver} (a capped API key),
 * the request's estimate is reserved after the reach check and before
 * anything is sent, and the request asks for no more output than was
 * reserved; the reservation is settled with the answer's usage, released
 * whole when the request was never sent, and charged as reserved when it
 * was sent but no usage came back (a cancel, the deadline, a provider
 * error: the provider may bill what it received).
 * A request that failed after the provider counted it (a `ProviderError`
 * with `reportedUsage`: a stream broken after its start) is charged what
 * was reported to the ledger and the reach budget, and to the spend caps
 * when that is more than was reserved.
 * @internal
 */
export async function sendModelRequest(site: RequestSite, gated: GatedRequest): Promise<GatedResponse> {
  const { execution, scope } = site;
  const { request } = gated;
  const signal = scope.signal;
  if (execution.aborted) throw execution.abortError;
  if (aborted(signal)) throw abortReason(signal!);
  const step = execution.step(site.steps);
  const reach = scope.reach;
  const spend = site.ledger.spend;
  const estimated = reach === undefined && spend === undefined ? 0 : estimateTokens(request.system, request.messages, request.tools);
  if (reach !== undefined) {
    const price = priceOf(reachPricing(site), request.model ?? "");
    reach.beforeRequest(estimated, price === undefined ? 0 : (estimated * price.inputPerMTok) / 1e6);
  }
  // A reserved request asks for no more output than it holds: what the reservation assumes is what the provider may write.
  const sent: GatedRequest = spend === undefined ? gated : { ...gated, request: withReservedOutput(request) };
  // Held before the request is sent, so runs on other processes charging the same caller see it (spend-reserver.ts).
  const reserved = spend === undefined ? undefined : reservedSpend(site, sent.request, estimated);
  const reservation: SpendReservation | undefined = spend === undefined ? undefined : await reserveWithin(spend, reserved!, signal, reach);
  const progress: RequestProgress = { sent: false, used: undefined, reported: undefined };
  let answered: GatedResponse & { readonly used: SpendAmount };
  try {
    answered = await answerRequest(site, sent, step, progress);
  } catch (error) {
    // A failing settle or release leaves the hold held until it expires (never an overshoot).
    if (reservation !== undefined) await unanswered(reservation, reserved!, progress).catch(() => undefined);
    throw error;
  }
  await reservation?.settle(answered.used);
  return { response: answered.response, llmId: answered.llmId, step };
}

/** `request` with an output limit, the one it has or {@link DEFAULT_RESERVED_OUTPUT_TOKENS}, so the provider's own default never applies. */
function withReservedOutput(request: ModelRequest): ModelRequest {
  return request.maxOutputTokens !== undefined ? request : { ...request, maxOutputTokens: DEFAULT_RESERVED_OUTPUT_TOKENS };
}

/** The rest of {@link sendModelRequest}, once the request may be sent; resolves with what the answer used too. */
async function answerRequest(site: RequestSite, gated: GatedRequest, step: number, progress: RequestProgress): Promise<GatedResponse & { readonly used: SpendAmount }> {
  const { events, scope, provider, tracing } = site;
  const { request } = gated;
  const signal = scope.signal;
  const model = request.model ?? "";
  if (events.listening) events.emit({ type: "model-request", step, model, functionName: scope.fn?.name });
  const chatSpan = tracing === undefined ? undefined : startChatSpan(tracing, scope, provider.providerId, request);
  let response: ModelResponse;
  // The reach deadline aborts a request still unanswered when it passes, with the error the run ends with.
  const limit = CallLimit.ofDeadline(scope.reach, signal);
  try {
    // Anyone listening gets the answer as it is written: the provider streams, and text-delta events follow its chunks.
    const streaming = gated.stream && events.listening ? { events, step } : undefined;
    response = await requestModel(provider, request, modelCallOptions(limit?.signal ?? signal, events, step), streaming, progress);
  } catch (error) {
    // Counted before it failed (a stream broken after its start): what the provider reported is billed, so it is charged.
    progress.reported = chargeReportedUsage(site, model, error, chatSpan);
    if (chatSpan !== undefined) {
      failSpan(chatSpan, error);
      chatSpan.end();
    }
    const at = gated.recordedInput === undefined ? undefined : site.recorder();
    // The node says what this request was charged, as an answered one does (an error charged by an inner request already is not).
    const charged = progress.reported === undefined ? undefined : ((error as ProviderError).reportedUsage as ModelResponse["usage"]);
    if (at !== undefined) recordLlmNode(at, events, model, requestInput(request, gated.recordedInput!), undefined, error, charged);
    throw error;
  } finally {
    limit?.dispose();
  }
  const used = spendOf(site, model, response);
  // From here on the answer's usage is what the request pays, whatever fails after it.
  progress.used = used;
  // One write per request, once it is answered: an unanswered request has nothing to keep.
  const at = gated.recordedInput === undefined ? undefined : site.recorder();
  const llmId = at === undefined ? undefined : recordLlmNode(at, events, model, requestInput(request, gated.recordedInput!), response, undefined);
  if (events.listening) events.emit({ type: "model-response", step, stopReason: response.stopReason, usage: response.usage });
  chargeUsage(site, model, response, chatSpan);
  if (chatSpan !== undefined) {
    answerChatSpan(tracing!, chatSpan, response, llmId);
    chatSpan.end();
  }
  return { response, llmId, step, used };
}

/**
 * What a request is reserved for: its input estimate plus its output limit
 * (`maxOutputTokens`, else {@link DEFAULT_RESERVED_OUTPUT_TOKENS}), priced
 * with the run's table (undefined when the model has no price there).
 */
function reservedSpend(site: RequestSite, request: ModelRequest, inputTokens: number): SpendAmount {
  const output = request.maxOutputTokens ?? DEFAULT_RESERVED_OUTPUT_TOKENS;
  const price: ModelPrice | undefined = priceOf(site.ledger.pricing, request.model ?? "");
  const costUsd = price === undefined ? undefined : (inputTokens * price.inputPerMTok + output * price.outputPerMTok) / 1e6;
  return { tokens: inputTokens + output, costUsd };
}

/**
 * Sends one request, racing its signal (a provider that ignores it
 * cannot hold the run), and checks what came back: anything thrown that is
 * not an Error, and a response without content, become {@link ProviderError}s.
 */
async function requestModel(
  provider: ModelProvider,
  request: ModelRequest,
  options: ModelCallOptions,
  streaming: { events: RunEvents; step: number } | undefined,
  progress: RequestProgress,
): Promise<ModelResponse> {
  const { signal } = options;
  // A full stream buffer holds the run here, before the request, not in the middle of one.
  const room = streaming?.events.ready();
  if (room !== undefined) await raceSignal(room, signal);
  // Checked right before sending (a listener of the `model-request` event may have cancelled): no paid request after a cancel.
  if (aborted(signal)) throw abortReason(signal!);
  let answer: ModelResponse;
  progress.sent = true;
  try {
    // A provider without stream() (a custom one) is asked as usual: its answer arrives whole.
    const call =
      streaming === undefined || typeof provider.stream !== "function"
        ? provider.complete(request, options)
        : streamProvider(provider, request, options, streaming);
    answer = await raceSignal(call, signal);
  } catch (error) {
    if (aborted(signal) || error instanceof Error || types.isNativeError(error)) throw error;
    throw new ProviderError(`model provider '${provider.providerId}' failed: it threw ${describeError(error)}`, {
      provider: String(provider.providerId),
      cause: error,
    });
  }
  if (typeof answer !== "object" || answer === null || !Array.isArray((answer as { content?: unknown }).content)) {
    throw new ProviderError(
      `model provider '${provider.providerId}' returned ${answer === null ? "null" : typeof answer} without a content array; ` +
        `a ModelProvider must resolve with { content: ContentBlock[], stopReason, usage }`,
      { provider: String(provider.providerId), body: answer },
    );
  }
  return { ...answer, usage: countedUsage(answer.usage, request, answer.content), content: checkedToolCalls(answer.content) };
}

/** A token count as a provider should give it: a finite number, not negative. */
function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}

/**
 * The usage a request is charged: the provider's, with each count it left
 * out or gave as something other than a finite, non-negative number
 * estimated instead (4 characters a token; input: the request sent, output:
 * the content that came back). A custom provider that reports no usage is
 * charged what it visibly used — never nothing, which would let a run spend
 * past `maxTokens` and every spend cap unseen. A count of 0 is taken at its
 * word (an agent asked as a provider reports what its own requests were
 * charged already).
 */
function countedUsage(reported: unknown, request: ModelRequest, content: readonly ContentBlock[]): ModelResponse["usage"] {
  const usage = (typeof reported === "object" && reported !== null ? reported : {}) as Partial<ModelResponse["usage"]>;
  if (isCount(usage.inputTokens) && isCount(usage.outputTokens)) return usage as ModelResponse["usage"];
  return {
    ...usage,
    inputTokens: isCount(usage.inputTokens) ? usage.inputTokens : estimateTokens(request.system, request.messages, request.tools),
    outputTokens: isCount(usage.outputTokens) ? usage.outputTokens : tokensFor(JSON.stringify(content).length),
  };
}

/** Read through a call, so the compiler does not assume a signal stays as it was before an await. */
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/**
 * Sends one request through `provider.stream()`: each text chunk becomes a
 * `text-delta` event (the run waits between chunks while a stream consumer
 * is behind), and the final `response` event is the answer. A stream that
 * ends without it is a {@link ProviderError}, never a partial answer.
 */
async function streamProvider(
  provider: ModelProvider,
  request: ModelRequest,
  options: ModelCallOptions,
  { events, step }: { events: RunEvents; step: number },
): Promise<ModelResponse> {
  let response: ModelResponse | undefined;
  for await (const chunk of provider.stream(request, options)) {
    if (chunk.type === "text-delta") {
      events.emit({ type: "text-delta", step, text: chunk.text });
      const room = events.ready();
      if (room !== undefined) await room;
    } else if (chunk.type === "response") {
      response = chunk.response;
    }
  }
  if (response === undefined) {
    throw new ProviderError(`model provider '${provider.providerId}' ended its stream without the final response event`, {
      provider: String(provider.providerId),
    });
  }
  return response;
}

/**
 * An llm node's input: `content`, the turn's new user content (what history
 * is rebuilt from), and the request as sent beside it — `sent`, the user
 * turn as the model got it (the situational guidance and context first,
 * loop notices after the tool results) when it differs from `content`;
 * `system`, the system prompt when there is one; `history`, how many
 * messages came before that turn (they are the nodes above it).
 */
interface LlmNodeInput {
  readonly content: readonly ContentBlock[];
  readonly sent?: readonly ContentBlock[];
  readonly system?: string;
  readonly history: number;
}

function requestInput(request: ModelRequest, content: readonly ContentBlock[]): LlmNodeInput {
  const last = request.messages[request.messages.length - 1];
  const sent = last?.role === "user" ? last.content : undefined;
  const same = sent === undefined || (sent.length === content.length && sent.every((block, index) => block === content[index]));
  return {
    content,
    ...(same ? {} : { sent }),
    ...(request.system === undefined || request.system === "" ? {} : { system: request.system }),
    history: Math.max(0, request.messages.length - (sent === undefined ? 0 : 1)),
  };
}

/** Writes the llm node of one answered (or failed) request (committed with the writer's next batch); `charged` is what a failed one was charged of what its provider reported. */
function recordLlmNode(
  cursor: SessionCursor,
  events: RunEvents,
  model: string,
  input: LlmNodeInput,
  response: ModelResponse | undefined,
  error: unknown,
  charged?: ModelResponse["usage"],
): string {
  const id = newNodeId();
  const status = response !== undefined ? "completed" : "error";
  const node = {
    id,
    role: "llm" as const,
    name: model,
    input: input as unknown,
    output: response === undefined ? undefined : ({ content: response.content } as unknown),
    metadata:
      response !== undefined
        ? { status, model: response.model ?? model, usage: response.usage, stopReason: response.stopReason }
        : { status, model, error: describeError(error), ...(charged === undefined ? {} : { usage: charged }) },
  };
  try {
    // Model turns are built by the runtime from parsed provider JSON and never mutated: no snapshot needed.
    cursor.append(node, { owned: true });
  } catch (failure) {
    // Content that is not JSON (say, tool arguments nested too deep to serialise) is kept readable, never fatal.
    if (!(failure instanceof TypeError)) throw failure;
    cursor.append({ ...node, input: toRecordable(node.input), output: toRecordable(node.output) });
  }
  // Not committed here: the writer's batch goes in when the event loop next turns (while the
  // process waits for the model or a tool), and the top-level call commits before it returns.
  if (events.listening) events.emit({ type: "node", phase: "end", nodeId: id, role: "llm", name: model, status });
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

/** Tokens reckoned for `characters` of text no provider counted: 4 characters a token. */
function tokensFor(characters: number): number {
  return Math.ceil(characters / 4);
}

/** A rough token estimate (4 characters a token), used against `maxContextTokens` and the reach token budget. @internal */
export function estimateTokens(system: string, messages: readonly Message[], tools: readonly unknown[]): number {
  return tokensFor(system.length + JSON.stringify(messages).length + JSON.stringify(tools).length);
}
