import { ReachPolicy, type ChainLimits, type LoopDetectionOptions, type ReachPolicyOptions, SessionMismatchError } from "@rein/guard";
import { Context } from "../context/context";
import type { ContentBlock } from "../model/content";
import { Runtime } from "../runtime/runtime";
import type { RunEvents } from "../runtime/run-events";
import { RunStream } from "../runtime/run-stream";
import type { ExecRequest } from "../runtime/exec-request";
import type { ExecResult } from "../runtime/exec-result";
import type { RunResult } from "../runtime/run-result";
import { choicePrompt, chosenId, normaliseChoices } from "./choices";
import { NO_USAGE, pausedTurnResult, turnResult } from "./turn-result";
import type { ResumeTurnOptions, TurnContinuation, TurnOptions, TurnRequest, TurnResult } from "./turns";
import type { RunResumption } from "../runtime/turn-pause";
import type { ScopeOwner } from "../scope/scope-owner";
import { pauseRunsOf, registerResumableAgent, resumeRunOf, type ResumeRunOptions } from "../resumable/resume-run";
import type { CodeChangePolicy, ExecutionOptions } from "../resumable/resumable-options";
import type { Tool } from "../tools/tool";
import type { ParametersSchema } from "../tools/schema";
import { AGENT_CLASS_BRAND } from "./agent-brand";
import { enterTurn } from "./turn-entry";
import { TurnControls, type TurnMark } from "./turn-controls";
import { consumeContinuation, newContinuationId } from "./consume-continuation";
import { classDefault, prepareAgentClass, type ClassInfo } from "./class-setup";
import { methodTools, resolveToolEntries } from "./agent-tools";
import {
  agentOptionsSchema,
  agentSpecSchema,
  checkAgentClassOptions,
  checkAgentOptions,
  checkAskArguments,
  checkTurnArguments,
  checkResumeArguments,
  checkChooseArguments,
  type AgentClassDefaults,
  type AgentOptions,
  type AgentSpec,
  type AgentToolEntry,
  type AskOptions,
  type ChoiceOptions,
  type Effort,
} from "./agent-options";

export type { AgentClassDefaults, AgentOptions, AgentSpec, AgentToolEntry, AskOptions, ChoiceOptions, Effort } from "./agent-options";

/**
 * The value a `responseFormat` schema validates to: the output type of a zod
 * (Standard Schema) schema, `unknown` for a JSON Schema.
 */
export type InferOutput<S> = S extends { readonly "~standard": { readonly types?: { readonly output: infer O } | undefined } } ? O : unknown;

let defaultRuntime: Runtime | undefined;

/**
 * The base class of Rein agents. Every ordinary method of a subclass runs
 * inside a call scope (guard frame, bound Context, session node); methods
 * marked `tool: true` in `methodOptions` are offered to the model by `ask`.
 * Settings resolve class default < constructor option < per-call override.
 * Class defaults are static fields of the subclass — `model`, `effort`,
 * `instructions`, `context`, `tools`, `runtime`, `methodOptions` (see
 * {@link AgentClassDefaults}); `Agent` itself declares none, so subclasses
 * need no `override` modifier.
 *
 * @example
 * ```ts
 * class Researcher extends Agent {
 *   static instructions = "Return a short, factual answer.";
 *   static methodOptions = { research: { tool: true, description: "Answer the prepared question." } };
 *   prepare(question: string) { return question.trim(); }
 *   async research(question: string) { return this.ask(this.prepare(question)); }
 * }
 * const answer = await new Researcher({ model: "claude-sonnet-4-5" }).research("A question");
 * ```
 */
export class Agent<Output = string> implements ScopeOwner {
  /** Marks Agent classes across copies of `@rein/core` (see {@link isAgentClass}); subclasses inherit it. */
  static readonly [AGENT_CLASS_BRAND] = true;
  readonly #options: AgentOptions;
  readonly #classInfo: ClassInfo;
  #ownContext: Context | undefined;
  #tools: Map<string, Tool> | undefined;
  #eventsFrom: RunEvents | undefined;
  #events: RunEvents | undefined;
  /** @internal guard limits of this agent's runtime, read on every scoped call. */
  readonly scopeLimits: ChainLimits | undefined;

  constructor(options: AgentOptions = {}) {
    checkAgentOptions(options);
    this.#classInfo = prepareAgentClass(new.target, Agent);
    checkAgentClassOptions(new.target, this.#classInfo, options);
    this.#options = options;
    this.#ownContext = options.context ?? classDefault<Context>(this, "context");
    this.scopeLimits = (options.runtime ?? classDefault<Runtime>(this, "runtime"))?.limits;
    if (this.#classInfo.resumable === true) registerResumableAgent(this);
  }

  /** Builds an agent from a plain spec (e.g. loaded from JSON), with overrides on top. */
  static fromSpec<T extends Agent>(this: new (options?: AgentOptions) => T, spec: AgentSpec, overrides: AgentOptions = {}): T {
    agentSpecSchema.parse(spec);
    agentOptionsSchema.parse(overrides);
    return new this({ ...spec, ...overrides });
  }

  /** The agent's name (option, else class name). */
  get name(): string {
    return this.#options.name ?? this.constructor.name;
  }

  /** The runtime the agent's requests go through. */
  get runtime(): Runtime {
    return this.#options.runtime ?? classDefault<Runtime>(this, "runtime") ?? (defaultRuntime ??= new Runtime());
  }

  /** The Context the agent's calls bind when called from outside any call. */
  get context(): Context {
    return (this.#ownContext ??= new Context());
  }

  /** @internal see {@link ScopeOwner}: the reach policy and fallback of this agent's entries. */
  get agentEntry(): ScopeOwner["agentEntry"] {
    if (this.#agentEntry !== undefined) return this.#agentEntry;
    const reach = this.#setting<ReachPolicy | ReachPolicyOptions>("reach");
    const policy = reach === undefined ? this.runtime.reach : reach instanceof ReachPolicy ? reach : new ReachPolicy(reach);
    return (this.#agentEntry = { reachPolicy: policy, fallback: this.#setting<NonNullable<AgentOptions["fallback"]>>("fallback") });
  }

  #agentEntry: ScopeOwner["agentEntry"];

  /** The entry settings of a loop on `runtime` (an `ask`'s override): the agent's own reach policy, else that runtime's. */
  #entryOn(runtime: Runtime): ScopeOwner["agentEntry"] {
    const entry = this.agentEntry!;
    return runtime === this.runtime || this.#setting("reach") !== undefined ? entry : { ...entry, reachPolicy: runtime.reach };
  }

  /** @internal see {@link ScopeOwner} */
  eventsFor(parent: RunEvents | undefined): RunEvents | undefined {
    // Every scoped call asks: the answer for the last caller's sink is kept (most calls come from one place).
    if (this.#eventsFrom === parent && this.#events !== undefined) return this.#events;
    this.#eventsFrom = parent;
    return (this.#events = this.runtime.eventsUnder(parent, this.constructor.name));
  }

  /** @internal see {@link ScopeOwner} */
  contextFor(callerContext: Context | undefined): Context {
    const own = this.#options.context ?? classDefault<Context>(this, "context");
    return own ?? callerContext ?? this.context;
  }

  /**
   * Runs one model-tool loop with this agent's settings and resolves with
   * the final answer's text. Inside a running call it joins that call's
   * execution; otherwise it starts a standalone one and releases it after.
   */
  ask<S extends ParametersSchema>(prompt: string | readonly ContentBlock[], overrides: AskOptions & { responseFormat: S }): Promise<InferOutput<S>>;
  ask(prompt: string | readonly ContentBlock[], overrides?: AskOptions): Promise<Output>;
  async ask(prompt: string | readonly ContentBlock[], overrides: AskOptions = {}): Promise<unknown> {
    checkAskArguments(prompt, overrides);
    const request = this.#execRequest(prompt, overrides);
    const runtime = overrides.runtime ?? this.runtime;
    // Asked from outside, the loop is an entry of this agent, as its methods and turns are: its reach policy, its fallback.
    const result = await enterTurn(this, request.context!, () => runtime.exec(request), { kind: "ask", entry: this.#entryOn(runtime), args: [prompt] });
    if ("fallback" in result) return result.fallback;
    return request.responseFormat === undefined ? result.text : result.output;
  }

  /**
   * Runs one model-tool loop like {@link ask} and returns it as a
   * {@link RunStream}: its events as they happen (text as the model writes
   * it), then `.result` with usage, request and tool-call counts. Invalid
   * arguments throw a `TypeError` at once.
   * @example
   * ```ts
   * const run = agent.stream("Summarise the report.");
   * for await (const event of run) if (event.type === "text-delta") process.stdout.write(event.text);
   * console.log((await run.result).usage);
   * ```
   */
  stream(prompt: string | readonly ContentBlock[], overrides: AskOptions = {}): RunStream {
    checkAskArguments(prompt, overrides);
    const runtime = overrides.runtime ?? this.runtime;
    const request = this.#execRequest(prompt, overrides);
    // No fallback for a stream (its result is a run's): a refusal ends it `error`.
    return new RunStream((listener) => enterTurn(this, request.context!, () => runtime.exec({ ...request, listener }), { kind: "stream", entry: this.#entryOn(runtime) }) as Promise<ExecResult>);
  }

  /**
   * Runs one conversation turn: the input as a top-level run on the
   * Context's session (this agent's settings apply), resolving with a
   * {@link TurnResult} whatever happens — a failed turn has its status and
   * error. A `request.sessionId` other than the Context's session is a
   * {@link SessionMismatchError} before anything is created; `headId`
   * continues after that node (a branch).
   * @example
   * ```ts
   * const turn = await agent.runTurn({ input: "And tomorrow?" }, { context: Context.forSession(store, "chat-42") });
   * console.log(turn.text, turn.usage.outputTokens, turn.headId);
   * ```
   */
  async runTurn(request: TurnRequest, options: TurnOptions = {}): Promise<TurnResult> {
    checkTurnArguments(request, options);
    let context = options.context ?? this.contextFor(Context.current());
    const bound = context.sessionId;
    if (request.sessionId !== undefined) {
      if (bound === undefined) {
        throw new TypeError(
          `runTurn: the request names session '${request.sessionId}', but the agent's Context records to no session store; ` +
            `pass { context: Context.forSession(store, '${request.sessionId}') }`,
        );
      }
      if (bound !== request.sessionId) throw new SessionMismatchError(request.sessionId, bound);
    }
    if (request.headId !== undefined) context = new Context({}, { parent: context, headId: request.headId });
    return this.#turn(request.input, context, options, undefined);
  }

  /**
   * Carries on a paused turn (see {@link TurnResult.continuation}): the
   * call that waited runs (`approve: true`) or is refused, the calls after
   * it run, and the model goes on — nothing is asked or run twice. Works in
   * another process on the same store: pass a Context on the continuation's
   * session (a {@link SessionMismatchError} otherwise, before anything runs).
   * @example
   * ```ts
   * const turn = await agent.runTurn({ input: "Deploy api." }, { context });
   * if (turn.status === "paused") await agent.resumeTurn(turn.continuation!, { approve: true, context });
   * ```
   */
  async resumeTurn(continuation: TurnContinuation, options: ResumeTurnOptions): Promise<TurnResult> {
    checkResumeArguments(continuation, options);
    const context = options.context ?? this.contextFor(Context.current());
    if (continuation.sessionId !== undefined && context.sessionId !== continuation.sessionId) {
      throw new SessionMismatchError(continuation.sessionId, context.sessionId ?? "(none)");
    }
    // Consumed before anything runs: a second resume of it never runs the approved call again. One that ended before it
    // carried anything on (cancelled, refused at entry) hands back the same pause under a new id: the answer is not lost.
    consumeContinuation(continuation, context);
    let started = false;
    const result = await this.#turn([], context, options, { ...continuation.run, approve: options.approve === true, onStart: () => (started = true) });
    return started || result.continuation !== undefined ? result : { ...result, continuation: { ...continuation, id: newContinuationId() } };
  }

  /**
   * Asks this agent's running turn to pause at its next safe point: once the
   * tool calls of the current step have run, before the next model request.
   * The turn then resolves `paused` with a continuation for
   * {@link resumeTurn}. With no turn running, the next turn pauses after its
   * first step. A resumable run of this agent running now pauses before its
   * next `step()` (its node and store state `paused`, waiting for
   * {@link resumeRun}).
   * @example
   * ```ts
   * const turn = agent.chat("Refactor the module.");
   * agent.pause();
   * const { status, continuation } = await turn; // "paused"
   * ```
   */
  pause(): void {
    this.#controls.requestPause();
    pauseRunsOf(this);
  }

  /**
   * Finishes a run of one of this agent's resumable methods (see
   * `methodOptions.resumable`) on its original node, from its store (the
   * agent's Context), and resolves with the method's result: finished steps
   * return their saved results without running. Rejects with
   * `RunPausedError` when the run must stay paused (naming the step or
   * function), `RunNotResumableError` when another live worker holds it.
   * @example
   * ```ts
   * const result = await pipeline.resumeRun(runId, { codeChangePolicy: "use_latest" });
   * ```
   */
  resumeRun<T = unknown>(runId: string, options: ResumeRunOptions = {}): Promise<T> {
    return resumeRunOf(this, runId, options) as Promise<T>;
  }

  /** @internal the agent's `execution.codeChangePolicy` (option, else class default), read when a run resumes. */
  get executionPolicy(): CodeChangePolicy | undefined {
    return this.#setting<ExecutionOptions>("execution")?.codeChangePolicy;
  }

  readonly #controls = new TurnControls();

  /** One turn's run on `context`: a fresh one, or a paused one carried on. */
  async #turn(input: string | readonly ContentBlock[], context: Context, options: TurnOptions, resume: RunResumption | undefined): Promise<TurnResult> {
    let finished: RunResult | undefined;
    let mark: TurnMark | undefined;
    const exec: ExecRequest = {
      ...this.#execRequest(input, { context, ...(options.signal === undefined ? {} : { signal: options.signal }) }),
      turn: {
        ...(resume === undefined ? {} : { resume }),
        pauseRequested: () => mark !== undefined && this.#controls.takePause(mark),
      },
      steering: () => this.#controls.takeSteering(),
      onFinish: (result) => (finished = result),
      ...(options.onEvent === undefined ? {} : { listener: { deliver: options.onEvent, gate: () => undefined } }),
    };
    const writer = context.store;
    let result;
    try {
      // A turn enters the agent as its methods do: depth, reach (a refusal fails the turn before any request), span.
      result = await this.#controls.running((running) => {
        mark = running;
        return enterTurn(this, context, () => this.runtime.exec(exec)) as Promise<ExecResult>;
      });
    } catch (error) {
      return turnResult(finished ?? { text: "", status: "error", usage: NO_USAGE, requests: 0, toolCalls: 0, error }, writer);
    }
    return result.paused === undefined ? turnResult(result.run, writer) : pausedTurnResult(result.run, result.paused, writer);
  }

  /**
   * Adds input to this agent's running turn, delivered at its next safe
   * point: joined to the next model request's user turn, never in the middle
   * of a tool call. With no turn running, it joins the next one's first
   * request.
   * @example
   * ```ts
   * const turn = agent.runTurn({ input: "Plan the trip." });
   * agent.steer("Keep it under 500 euros.");
   * await turn;
   * ```
   */
  steer(text: string): void {
    if (typeof text !== "string" || text.trim() === "") throw new TypeError("steer(text): text must be a non-empty string");
    this.#controls.steer(text);
  }

  /** The format of the answer: the call's, else the agent's (constructor option, then class default). */
  #responseFormat(overrides: AskOptions): { responseFormat?: ParametersSchema } {
    const format = overrides.responseFormat ?? this.#setting<ParametersSchema>("responseFormat");
    return format === undefined ? {} : { responseFormat: format };
  }

  /** The loop `ask` and `stream` run, with this agent's settings under `overrides`. */
  #execRequest(prompt: string | readonly ContentBlock[], overrides: AskOptions): ExecRequest {
    return {
      content: prompt,
      system: overrides.instructions ?? this.#setting<string>("instructions") ?? "",
      tools: this.#resolveTools(overrides.tools ?? this.#setting<readonly AgentToolEntry[]>("tools")),
      toolChoice: overrides.toolChoice,
      maxIterations: overrides.maxIterations,
      signal: overrides.signal,
      model: overrides.model ?? this.#setting<string>("model"),
      effort: overrides.effort ?? this.#setting<Effort>("effort"),
      context: overrides.context ?? this.contextFor(Context.current()),
      loopDetection: this.#setting<LoopDetectionOptions>("loopDetection"),
      agent: this.constructor.name,
      ...this.#responseFormat(overrides),
    };
  }

  /**
   * Makes one decision: asks the model to pick one of `options` and
   * resolves with the chosen id. Invalid options are rejected before any
   * request; an answer that is not an option throws {@link DecisionError}.
   */
  async choose(prompt: string, options: ChoiceOptions, overrides: Omit<AskOptions, "tools" | "toolChoice" | "responseFormat"> = {}): Promise<string> {
    checkChooseArguments(prompt, options, overrides);
    const choices = normaliseChoices(options);
    // Always a plain-text answer, whatever responseFormat the agent has.
    const request = this.#execRequest(choicePrompt(prompt, choices), {
      ...overrides,
      tools: [],
      maxIterations: 1,
    });
    const { responseFormat: _format, ...plain } = request;
    const runtime = overrides.runtime ?? this.runtime;
    const answered = await enterTurn(this, plain.context!, () => runtime.exec(plain), { kind: "choose", entry: this.#entryOn(runtime), args: [prompt, options] });
    return "fallback" in answered ? (answered.fallback as string) : chosenId(answered.text, choices);
  }

  /** The agent's `tool: true` methods as tools bound to this instance. */
  asTools(): Tool[] {
    return [...this.#toolMap().values()];
  }

  #toolMap(): Map<string, Tool> {
    return (this.#tools ??= methodTools(this, this.#classInfo, this.#options));
  }

  #resolveTools(entries: readonly AgentToolEntry[] | undefined): Tool[] {
    return entries === undefined ? this.asTools() : resolveToolEntries(this.name, entries, this.#toolMap());
  }

  #setting<T>(name: keyof AgentOptions & keyof AgentClassDefaults): T | undefined {
    const value = this.#options[name];
    return (value !== undefined ? value : classDefault<T>(this, name)) as T | undefined;
  }
}
