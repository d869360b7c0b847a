import type { Logger } from "pino";
import { defaultLogger } from "./silent-logger";
import type { ChainLimits, LoopDetectionOptions } from "@rein/guard";
import { MAX_AGENTIC_RECURSION_DEPTH, ReachPolicy, type ReachPolicyOptions, MissingProviderError } from "@rein/guard";
import { checkExecRequest } from "./exec-request";
import { checkRuntimeOptions, type RuntimeOptions } from "./runtime-options";
import type { ModelProvider } from "../model/model-provider";
import type { ExecRequest } from "./exec-request";
import { LoopGuard, type ResolvedLoopDetection } from "./loop-guard";
import type { LoopSettings } from "./loop-settings";
import { runModelToolLoop, type ExecResult } from "./model-tool-loop";
import { RunEvents } from "./run-events";
import type { RunEventListener } from "./runtime-events";
import type { Pricing } from "./run-result";
import type { TelemetryOptions } from "../telemetry/telemetry-options";

export type { ExecRequest } from "./exec-request";
export type { RuntimeOptions } from "./runtime-options";

let defaultProviderFactory: (() => ModelProvider) | undefined;

/**
 * Installs the function that creates a provider for runtimes constructed
 * without one (the `rein` umbrella installs `createProvider`). It is called
 * lazily, on the first model request.
 */
export function setDefaultProviderFactory(factory: (() => ModelProvider) | undefined): void {
  defaultProviderFactory = factory;
}

/**
 * Runs model-tool loops: the constant system prefix, history selected
 * through the Context, the situational prefix and Context blocks in the
 * user turn, and tool calls through the guards.
 *
 * @example
 * ```ts
 * const runtime = new Runtime({ provider: new ScriptedProvider(["Hello."]) });
 * const { text } = await runtime.exec({ content: "Say hello." });
 * ```
 */
export class Runtime {
  readonly model: string | undefined;
  readonly maxIterations: number;
  readonly maxSteps: number;
  readonly logger: Logger;
  readonly onEvent: RunEventListener | undefined;
  /** See {@link RuntimeOptions.pricing}. */
  readonly pricing: Pricing | undefined;
  /** See {@link RuntimeOptions.reach}. */
  readonly reach: ReachPolicy | undefined;
  readonly loopDetection: LoopDetectionOptions | undefined;
  readonly maxContextTokens: number | undefined;
  /** Whether spans of this runtime's runs carry message content and tool arguments/results. */
  readonly captureContent: boolean;
  /** Guard limits applied to every scoped call of agents using this runtime; undefined = defaults. */
  readonly limits: ChainLimits | undefined;
  private configuredProvider: ModelProvider | undefined;
  /** Loop settings resolved once per agent loop-detection object (the common case: one per agent class). */
  private readonly resolved = new WeakMap<object, LoopSettings>();
  private ownSettings: LoopSettings | undefined;
  private readonly rootEvents = new Map<string, RunEvents>();

  constructor(options: RuntimeOptions = {}) {
    checkRuntimeOptions(options);
    this.configuredProvider = options.provider;
    this.model = options.model;
    this.maxIterations = options.maxIterations ?? 20;
    this.maxSteps = options.maxSteps ?? 100;
    const limits: ChainLimits = {};
    if (options.recursionLimit !== undefined) limits.recursionLimit = options.recursionLimit;
    if (options.maxCycleRepeats !== undefined) limits.maxCycleRepeats = options.maxCycleRepeats;
    if (options.maxChainDepth !== undefined) limits.maxChainDepth = options.maxChainDepth;
    this.limits = Object.keys(limits).length > 0 ? limits : undefined;
    this.logger = options.logger ?? defaultLogger();
    this.onEvent = options.onEvent;
    this.loopDetection = options.loopDetection;
    this.maxContextTokens = options.maxContextTokens;
    this.captureContent = options.telemetry?.captureContent ?? false;
    this.pricing = options.pricing;
    this.reach = options.reach === undefined || options.reach instanceof ReachPolicy ? options.reach : new ReachPolicy(options.reach);
  }

  /** The provider, created from the default factory on first use. */
  get provider(): ModelProvider {
    if (this.configuredProvider === undefined) {
      if (defaultProviderFactory === undefined) throw new MissingProviderError();
      this.configuredProvider = defaultProviderFactory();
    }
    return this.configuredProvider;
  }

  /**
   * Runs one model-tool loop and resolves with the model's final answer.
   * Inside a running call it joins that call's execution (sharing the step
   * budget and refusal count); otherwise it starts a standalone one.
   */
  exec(request: ExecRequest): Promise<ExecResult> {
    try {
      checkExecRequest(request);
    } catch (error) {
      return Promise.reject(error);
    }
    return runModelToolLoop(this.settingsFor(request.loopDetection), request);
  }

  /**
   * @internal Where calls of agents using this runtime report: its listener
   * and logger, under the caller's sink when there is one.
   */
  eventsUnder(parent: RunEvents | undefined, agent: string): RunEvents {
    if (parent !== undefined) return parent.nested(this.logger, this.onEvent, agent);
    let root = this.rootEvents.get(agent);
    if (root === undefined) this.rootEvents.set(agent, (root = RunEvents.root(this.logger, this.onEvent, agent)));
    return root;
  }

  /** This runtime's settings for a loop of an agent with `perAgent` loop-detection options. */
  private settingsFor(perAgent: LoopDetectionOptions | undefined): LoopSettings {
    if (perAgent === undefined) return (this.ownSettings ??= this.resolveSettings(LoopGuard.resolve(this.loopDetection, undefined)));
    let settings = this.resolved.get(perAgent);
    if (settings === undefined) {
      settings = this.resolveSettings(LoopGuard.resolve(this.loopDetection, perAgent));
      this.resolved.set(perAgent, settings);
    }
    return settings;
  }

  private resolveSettings(loopDetection: ResolvedLoopDetection): LoopSettings {
    return {
      provider: () => this.provider,
      model: this.model,
      maxIterations: this.maxIterations,
      maxSteps: this.maxSteps,
      maxContextTokens: this.maxContextTokens,
      recursionLimit: this.limits?.recursionLimit ?? MAX_AGENTIC_RECURSION_DEPTH,
      chainLimits: this.limits,
      loopDetection,
      logger: this.logger,
      onEvent: this.onEvent,
      pricing: this.pricing,
      reach: this.reach,
      captureContent: this.captureContent,
    };
  }
}
