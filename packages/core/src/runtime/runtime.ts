import pino, { type Logger } from "pino";
import type { ChainLimits, LoopDetectionOptions } from "@rein/guard";
import type { Context } from "../context/context";
import { MissingProviderError } from "../errors/core-errors";
import type { ContentBlock } from "../model/content";
import type { ModelProvider, ToolChoice } from "../model/model-provider";
import type { Tool } from "../tools/tool";
import { runModelToolLoop, type ExecResult } from "./model-tool-loop";
import type { RuntimeEventListener } from "./runtime-events";

/** Options of the {@link Runtime} constructor. */
export interface RuntimeOptions {
  /** The model provider. @default the factory installed with {@link setDefaultProviderFactory} (the `rein` package installs one reading the environment) */
  provider?: ModelProvider;
  /** Model id used when an agent names none. @default the provider's own */
  model?: string;
  /** Active frames of one function allowed on a chain. @default 5 */
  recursionLimit?: number;
  /** Repeats of a call cycle allowed. @default 2 */
  maxCycleRepeats?: number;
  /** Frames allowed on one chain. @default 25 */
  maxChainDepth?: number;
  /** Model requests per model-tool loop. @default 20 */
  maxIterations?: number;
  /** Model requests shared by a run and every run nested in it. @default 100 */
  maxSteps?: number;
  /** A pino logger. @default silent, unless REIN_LOG_LEVEL is set */
  logger?: Logger;
  /** Receives every {@link RuntimeEvent}. */
  onEvent?: RuntimeEventListener;
  /** Global tool-loop detection settings; agents overlay theirs field by field. @default off */
  loopDetection?: LoopDetectionOptions;
  /** Compact the conversation before a request whose estimated size exceeds this many tokens. @default only on a provider's context overflow */
  maxContextTokens?: number;
}

/** One model-tool loop to run. */
export interface ExecRequest {
  /** The new user content: a prompt or content blocks. */
  content: string | readonly ContentBlock[];
  /** Instructions: the constant system prefix. @default "" */
  system?: string;
  /** Tools the model may call. @default none */
  tools?: readonly Tool[];
  toolChoice?: ToolChoice;
  /** @default the runtime's maxIterations */
  maxIterations?: number;
  signal?: AbortSignal;
  /** @default the runtime's model, else the provider's */
  model?: string;
  effort?: "low" | "medium" | "high";
  /** The Context whose blocks and history the requests use. @default the current call's */
  context?: Context;
  /** Per-agent tool-loop detection settings, overlaid on the runtime's. */
  loopDetection?: LoopDetectionOptions;
}

const KNOWN_OPTIONS = new Set([
  "provider",
  "model",
  "recursionLimit",
  "maxCycleRepeats",
  "maxChainDepth",
  "maxIterations",
  "maxSteps",
  "logger",
  "onEvent",
  "loopDetection",
  "maxContextTokens",
]);

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
  readonly onEvent: RuntimeEventListener | undefined;
  readonly loopDetection: LoopDetectionOptions | undefined;
  readonly maxContextTokens: number | undefined;
  /** Guard limits applied to every scoped call of agents using this runtime; undefined = defaults. */
  readonly limits: ChainLimits | undefined;
  private configuredProvider: ModelProvider | undefined;

  constructor(options: RuntimeOptions = {}) {
    const unknown = Object.keys(options).filter((key) => !KNOWN_OPTIONS.has(key));
    if (unknown.length > 0) throw new TypeError(`Unsupported Runtime options: ${unknown.join(", ")}`);
    this.configuredProvider = options.provider;
    this.model = options.model;
    this.maxIterations = positive("maxIterations", options.maxIterations, 20);
    this.maxSteps = positive("maxSteps", options.maxSteps, 100);
    const limits: ChainLimits = {};
    if (options.recursionLimit !== undefined) limits.recursionLimit = positive("recursionLimit", options.recursionLimit, 5);
    if (options.maxCycleRepeats !== undefined) limits.maxCycleRepeats = positive("maxCycleRepeats", options.maxCycleRepeats, 2);
    if (options.maxChainDepth !== undefined) limits.maxChainDepth = positive("maxChainDepth", options.maxChainDepth, 25);
    this.limits = Object.keys(limits).length > 0 ? limits : undefined;
    this.logger = options.logger ?? pino({ level: process.env["REIN_LOG_LEVEL"] ?? "silent" });
    this.onEvent = options.onEvent;
    this.loopDetection = options.loopDetection;
    this.maxContextTokens =
      options.maxContextTokens === undefined ? undefined : positive("maxContextTokens", options.maxContextTokens, 1);
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
    return runModelToolLoop(this, request);
  }
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0) {
    throw new TypeError(`Invalid Runtime option ${name}: ${String(value)} — expected a positive integer`);
  }
  return value;
}
