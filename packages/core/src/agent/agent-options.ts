/**
 * The options of `Agent` (constructor, class defaults, `ask`, `choose`,
 * `fromSpec`, `runTurn`, `resumeTurn`) and of the standalone `agent()`
 * function, with their schemas, in one file: agent.ts and agent-function.ts
 * import both, and nothing here imports them back.
 */
import type { LoopDetectionOptions, ReachError, ReachPolicy, ReachPolicyOptions } from "@rein/guard";
import type { Context } from "../context/context";
import type { ModelProvider, ToolChoice } from "../model/model-provider";
import type { ExecutionOptions } from "../resumable/resumable-options";
import type { Runtime } from "../runtime/runtime";
import type { ParametersSchema } from "../tools/schema";
import type { Tool } from "../tools/tool";
import type { ResumeTurnOptions, TurnOptions, TurnRequest } from "./turns";
import type { ClassInfo } from "./class-setup";
import type { ToolApprover } from "./method-tool";
import { validateMethodOptions, type MethodOptions } from "./method-options";
import { abortSignal, agentToolList, checkLoopDetection, content, context, effort, loopDetection, modelId, provider, runtime, toolChoice } from "../options/core-rules";
import { optionSchema } from "@rein/session";

const { anyOf, arrayOf, boolean, checkArgument, func, isObject, nonEmptyString, object, oneOf, optionsSchema, positiveInteger, problemMessage, recordOf, required, rule, string } = optionSchema;
type Shape<T = Record<string, unknown>> = optionSchema.Shape<T>;

/** Reasoning effort, for models that take one. */
export type Effort = "low" | "medium" | "high";

/** A tool, or the name of one of the agent's `tool: true` methods. */
export type AgentToolEntry = Tool | string;

/** Options of the {@link Agent} constructor; each overrides the class default of the same name. */
export interface AgentOptions {
  /** Model id. @default the runtime's, else the provider's */
  model?: string;
  effort?: Effort;
  /** The constant system prefix of the agent's requests. @default "" */
  instructions?: string;
  /** The Context the agent's calls bind. @default the caller's, else one of its own */
  context?: Context;
  /** Tools offered by `ask`: undefined = all the agent's tool methods, [] = none, or a list. */
  tools?: readonly AgentToolEntry[];
  /** @default a shared Runtime using the default provider */
  runtime?: Runtime;
  /** Per-method overrides of the tool descriptions and settings. */
  methodOptions?: Readonly<Record<string, MethodOptions>>;
  /** A name for logs and specs. @default the class name */
  name?: string;
  /** What the agent does. */
  description?: string;
  /** Decides tool calls of `requiresApproval` methods; without it they are refused. */
  approveToolCall?: ToolApprover;
  /** Tool-loop detection overrides for this agent, overlaid field by field on the runtime's. */
  loopDetection?: LoopDetectionOptions;
  /**
   * The reach policy of the agent's calls (a `ReachPolicy` or its options):
   * logic depth, memory, trust zone, tokens, cost and deadline.
   * @default the runtime's `reach`, else none
   */
  reach?: ReachPolicy | ReachPolicyOptions;
  /**
   * Called instead of throwing when reach refuses a call of the agent (an
   * Agent entry): its value is the call's result, recorded as degraded.
   */
  fallback?: (task: { readonly name: string; readonly args: readonly unknown[] }, error: ReachError) => unknown;
  /**
   * Settings of the agent's resumable runs (`methodOptions.resumable`):
   * `codeChangePolicy` applies to every resumable method of the agent that
   * sets none itself; a resume can still override it.
   * @default { codeChangePolicy: "keep_original" }
   */
  execution?: ExecutionOptions;
  /**
   * Every `ask` of the agent answers in this format (see
   * {@link AskOptions.responseFormat}; a per-call one wins). Declare the
   * value's type as the class's type parameter: `class Extractor extends
   * Agent<Invoice> { static responseFormat = InvoiceSchema }`.
   */
  responseFormat?: ParametersSchema;
}

/** Per-call overrides of {@link Agent.ask}. */
export interface AskOptions {
  model?: string;
  effort?: Effort;
  instructions?: string;
  tools?: readonly AgentToolEntry[];
  context?: Context;
  runtime?: Runtime;
  toolChoice?: ToolChoice;
  maxIterations?: number;
  signal?: AbortSignal;
  /**
   * The final answer must match this schema — a zod (Standard Schema) schema
   * or a JSON Schema object — and `ask` resolves with the validated value
   * (typed from a zod schema) instead of text. The provider's native
   * structured output is used; an answer that does not validate gets one
   * repair request, then {@link OutputValidationError}. Tools still run
   * first in the same loop.
   */
  responseFormat?: ParametersSchema;
}

/**
 * The static fields a subclass may declare as class defaults. Annotate with
 * it to have them type-checked: `static methodOptions: AgentClassDefaults["methodOptions"] = {...}`.
 */
export type AgentClassDefaults = Pick<
  AgentOptions,
  "model" | "effort" | "instructions" | "context" | "tools" | "runtime" | "methodOptions" | "loopDetection" | "responseFormat" | "reach" | "fallback" | "execution"
> & {
  /**
   * The class's durable id: runs of its resumable methods are recorded as
   * `<id>.<method>` and resumed by the class with that id (see `agentClassId`).
   * Not inherited by subclasses.
   * @default the class name
   */
  id?: string;
};

/** A plain description of an agent, for `Agent.fromSpec`. */
export interface AgentSpec {
  name?: string;
  description?: string;
  instructions?: string;
  model?: string;
  effort?: Effort;
  tools?: readonly AgentToolEntry[];
}

/** Options of `Agent.choose`: ids, or ids with descriptions. */
export type ChoiceOptions = readonly string[] | Readonly<Record<string, string>> | readonly { id: string; description?: string }[];

/** Options of the standalone `agent()` function: agent settings, per-call settings, and optionally a provider. */
export interface AgentFunctionOptions extends Omit<AgentOptions, "methodOptions" | "execution">, Omit<AskOptions, keyof AgentOptions> {
  /** Shorthand for `runtime: new Runtime({ provider })`. */
  provider?: ModelProvider;
}

const methodOptionsMap = recordOf(rule("an object of method options", isObject, "object"), "{ methodName: { ...options } }");

const agentShape: Shape<AgentOptions> = {
  model: modelId,
  effort,
  instructions: string,
  context,
  tools: agentToolList,
  runtime,
  methodOptions: methodOptionsMap,
  name: nonEmptyString,
  description: string,
  approveToolCall: func("a function (call) => boolean | Promise<boolean>"),
  loopDetection,
  responseFormat: rule("a zod schema or a JSON Schema object", (value) => typeof value === "object" && value !== null && !Array.isArray(value), "object"),
  reach: rule("a ReachPolicy or its options", (value) => typeof value === "object" && value !== null && !Array.isArray(value), "object"),
  fallback: func("a function (task, error) => value"),
  execution: object({ codeChangePolicy: oneOf("keep_original", "use_latest") }, "{ codeChangePolicy? }"),
};

/** {@link AgentOptions}: the `Agent` constructor and `fromSpec` overrides. */
export const agentOptionsSchema = optionsSchema<AgentOptions>("Agent", agentShape);

const askShape: Shape<AskOptions> = {
  model: modelId,
  effort,
  instructions: string,
  tools: agentToolList,
  context,
  runtime,
  toolChoice,
  maxIterations: positiveInteger,
  signal: abortSignal,
  responseFormat: rule("a zod schema or a JSON Schema object", (value) => typeof value === "object" && value !== null && !Array.isArray(value), "object"),
};

/** {@link AskOptions}: the overrides of `agent.ask`. */
export const askOptionsSchema = optionsSchema<AskOptions>("ask", askShape);

/** The overrides of `agent.choose` (ask's, without tools, toolChoice and responseFormat). */
export const chooseOptionsSchema = optionsSchema<Omit<AskOptions, "tools" | "toolChoice" | "responseFormat">>("choose", {
  model: modelId,
  effort,
  instructions: string,
  context,
  runtime,
  maxIterations: positiveInteger,
  signal: abortSignal,
});

/** {@link AgentSpec}: what `Agent.fromSpec` takes. */
export const agentSpecSchema = optionsSchema<AgentSpec>("Agent spec", {
  name: nonEmptyString,
  description: string,
  instructions: string,
  model: modelId,
  effort,
  tools: agentToolList,
});

/** {@link AgentFunctionOptions}: the standalone `agent()` function. */
export const agentFunctionOptionsSchema = optionsSchema<AgentFunctionOptions>("agent()", {
  ...(({ methodOptions: _omitted, execution: _resumableOnly, ...rest }) => rest)(agentShape),
  ...askShape,
  provider,
});

/** `choose()` options: ids, `{ id, description }` entries, or `{ id: description }`. */
const choiceOptions = anyOf(
  [
    arrayOf(
      anyOf([nonEmptyString, object({ id: required(nonEmptyString), description: string }, "{ id, description? }")], "an id or { id, description }"),
      "an array of ids or of { id, description }",
    ),
    recordOf(string, "{ id: description }"),
  ],
  "an array of ids, an array of { id, description }, or { id: description }",
);

/** Checks the arguments of `agent.ask`. */
export function checkAskArguments(prompt: unknown, overrides: unknown): AskOptions {
  if (typeof prompt !== "string") checkArgument("ask", "prompt", content, prompt);
  return askOptionsSchema.parse(overrides);
}

/** Checks the arguments of `agent.choose`. */
export function checkChooseArguments(prompt: unknown, options: unknown, overrides: unknown): ChoiceOptions {
  checkArgument("choose", "prompt", string, prompt);
  checkArgument("choose", "options", choiceOptions, options);
  chooseOptionsSchema.parse(overrides);
  return options as ChoiceOptions;
}

/** Checks `Agent` constructor options that need no class: shape, types, and loop-detection settings. */
export function checkAgentOptions(options: unknown): AgentOptions {
  const parsed = agentOptionsSchema.parse(options);
  if (parsed.loopDetection !== undefined) checkLoopDetection("Agent", parsed.loopDetection);
  return parsed;
}

const CLASS_DEFAULTS = ["model", "effort", "instructions", "context", "tools", "runtime", "loopDetection", "execution"] as const;
const checkedClasses = new WeakSet<object>();

/** Method options that shape the class's wrapper or schema, read once per class: an instance cannot change them. */
const CLASS_FIXED: readonly (keyof MethodOptions)[] = ["parameters", "expose", "renderRange", "resumable"];
/** Their defaults, so restating a default per instance is not a change. */
const FIXED_DEFAULTS: Partial<MethodOptions> = { expose: "full", resumable: false };

/**
 * The checks that need the agent's class: its static class defaults (once
 * per class), constructor `methodOptions` (each through
 * `validateMethodOptions`, naming a method of the class, changing only what
 * an instance can change), and tool-method names in `tools`.
 */
export function checkAgentClassOptions(agentClass: object, classInfo: ClassInfo, options: AgentOptions): void {
  const className = (agentClass as { name?: string }).name || "AnonymousAgent";
  const statics = agentClass as Record<string, unknown>;
  if (!checkedClasses.has(agentClass)) {
    for (const name of CLASS_DEFAULTS) {
      const value = statics[name];
      if (value === undefined) continue;
      const problem = agentShape[name].check(value);
      if (problem !== undefined) {
        throw new TypeError(problemMessage("Agent class default", { ...problem, path: `${className}.${name}${problem.path}` }));
      }
      if (name === "loopDetection") checkLoopDetection(`${className} class default`, value as LoopDetectionOptions);
    }
    checkedClasses.add(agentClass);
  }
  const overrides = options.methodOptions;
  if (overrides !== undefined) {
    for (const name of Object.keys(overrides)) {
      const method = classInfo.methods.get(name);
      if (method === undefined) {
        throw new TypeError(`Invalid methodOptions for ${className}.${name}: ${className} has no method named '${name}'`);
      }
      const given = validateMethodOptions(className, name, overrides[name]);
      for (const key of CLASS_FIXED) {
        if (given[key] !== undefined && given[key] !== (method.options[key] ?? FIXED_DEFAULTS[key])) {
          throw new TypeError(
            `Invalid methodOptions for ${className}.${name}: '${key}' is fixed when the class is first used; ` +
              `set it in static methodOptions or with @method()`,
          );
        }
      }
      if (given.tool === true && method.tool === undefined) {
        throw new TypeError(
          `Invalid methodOptions for ${className}.${name}: tool: true needs ${name} to be a tool method of the class ` +
            `(static methodOptions or @method({ tool: true })); an instance can only switch a tool off`,
        );
      }
    }
  }
  const tools = options.tools ?? (statics["tools"] as AgentOptions["tools"]);
  if (tools === undefined) return;
  for (const entry of tools) {
    if (typeof entry !== "string") continue;
    const method = classInfo.methods.get(entry);
    const isTool = method?.tool !== undefined && (overrides?.[entry]?.tool ?? method.options.tool) === true;
    if (!isTool) {
      const names = [...classInfo.methods.values()]
        .filter((item) => item.tool !== undefined && (overrides?.[item.name]?.tool ?? item.options.tool) === true)
        .map((item) => item.name);
      throw new TypeError(`${options.name ?? className} has no tool method named '${entry}' (its tool methods: ${names.join(", ") || "none"})`);
    }
  }
}

/** {@link TurnRequest} and {@link TurnOptions}: the arguments of `agent.runTurn`. */
const turnRequestSchema = optionsSchema<TurnRequest>("runTurn request", {
  input: required(content),
  sessionId: nonEmptyString,
  headId: nonEmptyString,
});
const turnOptionsSchema = optionsSchema<TurnOptions>("runTurn", {
  context,
  onEvent: func("a function (event) => void"),
  signal: abortSignal,
});

/** Checks the arguments of `agent.runTurn`. */
export function checkTurnArguments(request: unknown, options: unknown): void {
  turnRequestSchema.parse(request);
  turnOptionsSchema.parse(options);
}

const resumeOptionsSchema = optionsSchema<ResumeTurnOptions>("resumeTurn", {
  approve: boolean,
  context,
  onEvent: func("a function (event) => void"),
  signal: abortSignal,
});

/** Checks the arguments of `agent.resumeTurn`: a continuation from a paused turn, and the answer. */
export function checkResumeArguments(continuation: unknown, options: unknown): void {
  const valid =
    typeof continuation === "object" &&
    continuation !== null &&
    (continuation as { version?: unknown }).version === 1 &&
    typeof (continuation as { run?: unknown }).run === "object" &&
    Array.isArray((continuation as { run: { pending?: unknown } }).run.pending) &&
    ((continuation as { reason?: unknown }).reason === "pause" || (continuation as { run: { pending: unknown[] } }).run.pending.length > 0);
  if (!valid) {
    throw new TypeError("resumeTurn: continuation must be the `continuation` of a paused TurnResult (version 1, with the pending call)");
  }
  const parsed = resumeOptionsSchema.parse(options);
  if ((continuation as { reason?: unknown }).reason === "approval" && parsed.approve === undefined) {
    throw new TypeError("resumeTurn: the turn waits for an approval: pass { approve: true } to run the call or { approve: false } to refuse it");
  }
}
