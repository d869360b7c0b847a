import type { Frame } from "@rein/guard";
import type { ScopedFunctionInfo } from "../scope/call-scope";
import { enterFunctionScope, type ScopeOwner } from "../scope/enter-scope";
import { resolveSchema, type ResolvedSchema } from "../tools/schema";
import { paramTypesOf, readSignature, schemaFromSignature } from "../tools/signature";
import { checkToolName } from "../tools/tool-definition";
import { decoratedOptions } from "./method-decorator";
import { validateMethodOptions, type MethodOptions } from "./method-options";
import { resumableOptionsOf } from "../resumable/resumable-options";
import { resumableWrapper } from "../resumable/resumable-run";
import { registerAgentClassId } from "./agent-id";

/** What setup learned about one scoped method. */
export interface MethodInfo {
  readonly name: string;
  readonly className: string;
  readonly options: MethodOptions;
  /** For `tool: true` methods: the argument schema, and how arguments map to parameters. */
  readonly tool?: {
    readonly schema: ResolvedSchema;
    /** Parameter names in order, when arguments are passed positionally; undefined passes the arguments object. */
    readonly positional: readonly string[] | undefined;
  };
}

/** Per-class result of setup: its own methods, plus those inherited from scoped ancestors. */
export interface ClassInfo {
  readonly methods: ReadonlyMap<string, MethodInfo>;
  /** True when a method is resumable: its instances are registered for `resumeRun` / `resumeInterrupted`. */
  readonly resumable?: boolean;
}

const prepared = new WeakMap<object, ClassInfo>();
const EMPTY_CLASS: ClassInfo = { methods: new Map() };
let classCounter = 0;
const SCOPED = Symbol.for("rein.scopedMethod");

/**
 * Wraps every ordinary method of `agentClass` and its ancestors below
 * `base` — once per class — and validates their `methodOptions`.
 * Constructors, accessors, symbol-keyed methods and generators are left
 * alone. Returns the class's method table.
 */
export function prepareAgentClass(agentClass: abstract new (...args: never[]) => object, base: object): ClassInfo {
  const known = prepared.get(agentClass);
  if (known !== undefined) return known;
  if (agentClass === base) return EMPTY_CLASS;
  const parent = Object.getPrototypeOf(agentClass) as abstract new (...args: never[]) => object;
  const inherited = parent === base || parent === null ? new Map<string, MethodInfo>() : new Map(prepareAgentClass(parent, base).methods);

  const className = agentClass.name || "AnonymousAgent";
  // Runs of resumable methods are recorded under the durable id (static id, else the class name), never the bare .name alone.
  const durableId = registerAgentClassId(agentClass);
  const classId = ++classCounter;
  const optionsMap = ownMethodOptions(agentClass, className);
  const methods = inherited;
  const prototype = agentClass.prototype as Record<string, unknown>;

  // Turn entries are runs of their own, never scoped calls (a `chat` override starts a turn, not a node).
  const instanceNames = scopableNames(prototype, ["constructor", ...TURN_ENTRIES]);
  for (const name of instanceNames) {
    const options = mergeOptions(className, name, decoratedOptions(prototype, name), optionsMap[name], methods.get(name)?.options);
    const original = prototype[name] as (...args: unknown[]) => unknown;
    const info = methodInfo(className, name, options, original, paramTypesOf(prototype, name));
    methods.set(name, info);
    wrap(prototype, name, original, { key: `${classId}:${className}.${name}`, name: `${className}.${name}`, kind: "agent" }, info, true, `${durableId}.${name}`);
  }
  const statics = agentClass as unknown as Record<string, unknown>;
  for (const name of scopableNames(statics, ["length", "name", "prototype"])) {
    const options = mergeOptions(className, name, decoratedOptions(statics, name), undefined, undefined);
    const original = statics[name] as (...args: unknown[]) => unknown;
    const info = methodInfo(className, name, options, original, undefined);
    wrap(statics, name, original, { key: `${classId}:${className}.${name}:static`, name: `${className}.${name}`, kind: "agent" }, info, false, `${durableId}.${name}`);
  }
  for (const name of Object.keys(optionsMap)) {
    if (!methods.has(name)) {
      throw new TypeError(`Invalid methodOptions for ${className}.${name}: ${className} has no method named '${name}'`);
    }
  }
  const result: ClassInfo = { methods, resumable: [...methods.values()].some((method) => resumableOptionsOf(method.options.resumable) !== undefined) };
  prepared.set(agentClass, result);
  return result;
}

function ownMethodOptions(agentClass: object, className: string): Record<string, MethodOptions> {
  if (!Object.prototype.hasOwnProperty.call(agentClass, "methodOptions")) return {};
  const map = (agentClass as { methodOptions?: unknown }).methodOptions;
  if (map === undefined) return {};
  if (typeof map !== "object" || map === null || Array.isArray(map)) {
    throw new TypeError(`Invalid methodOptions for ${className}: expected { methodName: { ...options } }`);
  }
  const result: Record<string, MethodOptions> = {};
  for (const [name, options] of Object.entries(map)) result[name] = validateMethodOptions(className, name, options);
  return result;
}

function mergeOptions(
  className: string,
  name: string,
  decorated: MethodOptions | undefined,
  mapped: MethodOptions | undefined,
  inherited: MethodOptions | undefined,
): MethodOptions {
  if (decorated !== undefined) validateMethodOptions(className, name, decorated);
  return { ...inherited, ...decorated, ...mapped };
}

/** Own string-keyed plain methods (no accessors, generators or already-wrapped functions). */
/** Methods a subclass may override that are never wrapped as scoped calls. */
const TURN_ENTRIES = ["chat", "runTurn", "resumeTurn", "steer", "pause"];

function scopableNames(target: Record<string, unknown>, skip: readonly string[]): string[] {
  const names: string[] = [];
  for (const name of Object.getOwnPropertyNames(target)) {
    if (skip.includes(name)) continue;
    const descriptor = Object.getOwnPropertyDescriptor(target, name);
    if (descriptor === undefined || typeof descriptor.value !== "function") continue;
    const fn = descriptor.value as { constructor: { name: string }; [SCOPED]?: true };
    const kind = fn.constructor.name;
    if (kind === "GeneratorFunction" || kind === "AsyncGeneratorFunction" || fn[SCOPED]) continue;
    if (/^class[\s{]/.test(Function.prototype.toString.call(fn))) continue;
    names.push(name);
  }
  return names;
}

function methodInfo(
  className: string,
  name: string,
  options: MethodOptions,
  original: (...args: unknown[]) => unknown,
  paramTypes: readonly unknown[] | undefined,
): MethodInfo {
  if (!options.tool) return { name, className, options };
  const where = `${className}.${name}`;
  checkToolName(name, `methodOptions for ${where}`);
  const parameters = readSignature(original);
  if (options.parameters !== undefined) {
    const schema = resolveSchema(options.parameters, `methodOptions for ${where}`);
    const properties = Object.keys((schema.jsonSchema["properties"] ?? {}) as object);
    const names = parameters?.map((p) => p.name);
    const positional = names !== undefined && names.length > 0 && names.every((n) => properties.includes(n)) ? names : undefined;
    return { name, className, options, tool: { schema, positional } };
  }
  if (parameters === undefined) {
    throw new TypeError(
      `Invalid methodOptions for ${where}: cannot derive tool parameters from its signature (destructured or rest parameters); ` +
        `give 'parameters' as a JSON Schema or zod schema`,
    );
  }
  const schema = resolveSchema(schemaFromSignature(parameters, paramTypes), where);
  return { name, className, options, tool: { schema, positional: parameters.map((p) => p.name) } };
}

function wrap(
  target: Record<string, unknown>,
  name: string,
  original: (...args: unknown[]) => unknown,
  frame: Frame,
  method: MethodInfo,
  instance: boolean,
  /** `<durable id>.<method>`: the name a resumable method's runs are recorded and resumed under. */
  runName: string,
): void {
  const info: ScopedFunctionInfo = {
    name: frame.name,
    doc: method.options.description ?? "",
    expose: method.options.expose ?? "full",
    renderRange: method.options.renderRange,
    toolName: method.options.tool ? name : undefined,
    isAsync: original.constructor.name === "AsyncFunction",
  };
  const resumable = resumableOptionsOf(method.options.resumable);
  const scoped = resumable !== undefined
    ? resumableWrapper({ frame, info, name: runName, methodName: name, original, options: resumable })
    : instance
    ? function (this: ScopeOwner | undefined, ...args: unknown[]): unknown {
        // A detached call (`const f = agent.run; f()`) has no owner; it still runs scoped.
        const owner = this !== undefined && this !== null && typeof this.contextFor === "function" ? this : undefined;
        return enterFunctionScope(frame, info, owner, original, this, args);
      }
    : function (this: unknown, ...args: unknown[]): unknown {
        return enterFunctionScope(frame, info, undefined, original, this, args);
      };
  Object.defineProperty(scoped, "name", { value: name });
  Object.defineProperty(scoped, "length", { value: original.length });
  Object.defineProperty(scoped, SCOPED, { value: true });
  const descriptor = Object.getOwnPropertyDescriptor(target, name) as PropertyDescriptor;
  Object.defineProperty(target, name, { ...descriptor, value: scoped });
}

/** The static `name` an agent's class declares (a class default of an agent option). @internal */
export function classDefault<T>(agent: object, name: string): T | undefined {
  return (agent.constructor as unknown as Record<string, unknown>)[name] as T | undefined;
}
