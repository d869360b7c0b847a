/**
 * The one validation layer of Rein's public entries. A schema is built once,
 * at module load, from a handful of combinators; checking a value then
 * allocates nothing unless it fails, so `ask` and `exec` can afford it on
 * every call. Failures are `TypeError`s in one format:
 *
 * - `Invalid Agent option tools: "x" — expected an array of tools or tool-method names`
 * - `Unsupported Agent options: foo, bar`
 * - `Invalid ask argument prompt: 42 — expected a string or an array of content blocks`
 *
 * Exported by `@rein/session` as the namespace `optionSchema`, the one home
 * of this machinery: `@rein/core` builds its option schemas with it, and a
 * store of another package may check its own options the same way.
 *
 * @example
 * ```ts
 * import { optionSchema } from "@rein/session";
 * const { optionsSchema, positiveInteger, nonEmptyString } = optionSchema;
 * const myStoreOptionsSchema = optionsSchema<MyStoreOptions>("MyStore", { url: nonEmptyString, poolSize: positiveInteger });
 * myStoreOptionsSchema.parse(options); // TypeError: Invalid MyStore option poolSize: 0 — expected a positive integer
 * ```
 */

/** What a failed check reports. `path` is relative to the value checked (`""`, `"[2]"`, `".name"`). */
export interface Problem {
  readonly path: string;
  readonly value: unknown;
  /** The text after the dash, usually `expected <what the rule accepts>`. */
  readonly hint: string;
}

/** The kind of a value, as rules dispatch on it. */
export type ValueKind = "undefined" | "null" | "string" | "number" | "bigint" | "boolean" | "symbol" | "function" | "array" | "object";

/** A precompiled check of one value. */
export interface Rule {
  /** What the rule accepts, in words: `"a positive integer"`. */
  readonly expected: string;
  /** The only kind of value this rule can accept, when there is one (lets {@link anyOf} report the closest alternative). */
  readonly kind?: ValueKind;
  /** True when an object field must be present (set by {@link required}; fields are optional unless marked). */
  readonly required?: boolean;
  /** Undefined when `value` passes. */
  check(value: unknown): Problem | undefined;
}

/** The kind of `value`: `typeof`, with `null` and arrays told apart. */
export function kindOf(value: unknown): ValueKind {
  if (value === null) return "null";
  return Array.isArray(value) ? "array" : typeof value;
}

/** True for a non-null, non-array object. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A rule from a predicate. */
export function rule(expected: string, test: (value: unknown) => boolean, kind?: ValueKind): Rule {
  return {
    expected,
    kind,
    check: (value) => (test(value) ? undefined : { path: "", value, hint: `expected ${expected}` }),
  };
}

/** Any string, `""` included. */
export const string: Rule = rule("a string", (value) => typeof value === "string", "string");
/** A string with at least one character. */
export const nonEmptyString: Rule = rule("a non-empty string", (value) => typeof value === "string" && value !== "", "string");
/** `true` or `false`. */
export const boolean: Rule = rule("true or false", (value) => typeof value === "boolean", "boolean");
/** An integer ≥ 1 (not NaN, not Infinity). */
export const positiveInteger: Rule = rule("a positive integer", (value) => Number.isInteger(value) && (value as number) > 0, "number");
/** A finite number > 0. */
export const positiveNumber: Rule = rule(
  "a positive finite number",
  (value) => typeof value === "number" && value > 0 && Number.isFinite(value),
  "number",
);
/** Any plain object (not null, not an array). */
export const plainObject: Rule = rule("an object", isObject, "object");

/** A function; `expected` describes its signature. */
export function func(expected = "a function"): Rule {
  return rule(expected, (value) => typeof value === "function", "function");
}

/** One of the given literal values. */
export function oneOf(...values: readonly (string | number | boolean | null)[]): Rule {
  const shown = values.map((value) => JSON.stringify(value));
  const expected = shown.length === 1 ? shown[0] : `${shown.slice(0, -1).join(", ")} or ${shown[shown.length - 1]}`;
  const kinds = new Set(values.map(kindOf));
  const [kind] = kinds;
  return rule(expected, (value) => values.includes(value as string), kinds.size === 1 ? kind : undefined);
}

/**
 * An instance of the class `type()` returns. A thunk, read at check time, so
 * a schema can name a class whose module is still loading (an import cycle).
 */
export function instanceOf(type: () => abstract new (...args: never[]) => unknown, expected: string): Rule {
  return rule(expected, (value) => value instanceof type(), "object");
}

/** Duck typing: an object (or function) carrying each of `methods` as a function. */
export function hasMethods(expected: string, ...methods: readonly string[]): Rule {
  return rule(
    expected,
    (value) => {
      if ((typeof value !== "object" && typeof value !== "function") || value === null) return false;
      for (const name of methods) if (typeof (value as Record<string, unknown>)[name] !== "function") return false;
      return true;
    },
    "object",
  );
}

/** An array whose every item passes `item`. */
export function arrayOf(item: Rule, expected: string): Rule {
  return {
    expected,
    kind: "array",
    check(value) {
      if (!Array.isArray(value)) return { path: "", value, hint: `expected ${expected}` };
      for (let index = 0; index < value.length; index++) {
        const problem = item.check(value[index]);
        if (problem !== undefined) return { ...problem, path: `[${index}]${problem.path}` };
      }
      return undefined;
    },
  };
}

/** A plain object whose every own value passes `item` (`{ name: value }` maps). */
export function recordOf(item: Rule, expected: string): Rule {
  return {
    expected,
    kind: "object",
    check(value) {
      if (!isObject(value)) return { path: "", value, hint: `expected ${expected}` };
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        const problem = item.check(value[key]);
        if (problem !== undefined) return { ...problem, path: `${keyPath(key)}${problem.path}` };
      }
      return undefined;
    },
  };
}

/**
 * Passes when one alternative passes. On failure it reports the alternative
 * made for the value's kind when exactly one is (so `[42]` against "a string
 * or an array of blocks" says which item is wrong), else every alternative.
 */
export function anyOf(alternatives: readonly Rule[], expected = joinExpected(alternatives)): Rule {
  return {
    expected,
    check(value) {
      const kind = kindOf(value);
      let match: Rule | undefined;
      let matches = 0;
      for (const alternative of alternatives) {
        if (alternative.kind === kind) {
          match = alternative;
          matches++;
        }
      }
      if (matches === 1) return match!.check(value);
      for (const alternative of alternatives) if (alternative.check(value) === undefined) return undefined;
      return { path: "", value, hint: `expected ${expected}` };
    },
  };
}

/** Marks an object field as required (fields are optional, and `undefined` counts as absent, unless marked). */
export function required(inner: Rule): Rule {
  return { ...inner, check: inner.check, required: true };
}

/** The field rules of an object schema; with `T`, every key of `T` must have one. */
export type Shape<T = Record<string, unknown>> = { readonly [K in keyof Required<T>]: Rule };

/**
 * A nested object: each field checked by its rule, unknown fields refused
 * (`.nme: unknown field (known: type, name)`).
 */
export function object(shape: Shape, expected: string): Rule {
  const compiled = compile(shape);
  return {
    expected,
    kind: "object",
    check(value) {
      if (!isObject(value)) return { path: "", value, hint: `expected ${expected}` };
      const result = checkFields(compiled, value);
      if (result === undefined) return undefined;
      if (typeof result === "string") {
        return { path: keyPath(result), value: value[result], hint: `unknown field (known: ${compiled.names.join(", ")})` };
      }
      return { ...result, path: `.${result.path}` };
    },
  };
}

/** A compiled top-level options schema; see {@link optionsSchema}. */
export interface OptionsSchema<T> {
  /** Names the options in messages: `"Agent"`, `"ask"`, `"Runtime"`. */
  readonly owner: string;
  /**
   * Returns `value` typed when it is an options object whose keys are all
   * known and whose values all pass; otherwise throws a `TypeError` naming
   * the option and what it expects. `undefined` values count as absent.
   */
  parse(value: unknown): T;
}

/**
 * A schema for one public options type. `owner` names it in messages; the
 * `shape` must have a rule for every key of `T`, so an option added to the
 * type without a rule does not compile.
 */
export function optionsSchema<T>(owner: string, shape: Shape<T>): OptionsSchema<T> {
  const compiled = compile(shape as Shape);
  return {
    owner,
    parse(value: unknown): T {
      if (!isObject(value)) throw new TypeError(`Invalid ${owner} options: ${show(value)} — expected an object of options`);
      const result = checkFields(compiled, value);
      if (result === undefined) return value as T;
      if (typeof result === "string") {
        const unknown = Object.keys(value).filter((key) => !compiled.rules.has(key));
        throw new TypeError(`Unsupported ${owner} options: ${unknown.join(", ")}`);
      }
      throw new TypeError(problemMessage(`${owner} option`, result));
    },
  };
}

/** Checks one positional argument of `owner` (`"ask"`, `"SessionStore.createSession"`), throwing a `TypeError` naming it. */
export function checkArgument(owner: string, name: string, argument: Rule, value: unknown): void {
  const problem = argument.check(value);
  if (problem !== undefined) throw new TypeError(problemMessage(`${owner} argument`, { ...problem, path: `${name}${problem.path}` }));
}

/** `Invalid <what> <path>: <value> — <hint>`; `problem.path` names the option. */
export function problemMessage(what: string, problem: Problem): string {
  return `Invalid ${what} ${problem.path}: ${show(problem.value)} — ${problem.hint}`;
}

/** A short rendering of an offending value: strings quoted and cut at 60 characters, objects by kind. */
export function show(value: unknown): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
    case "bigint":
      return `${value}n`;
    case "symbol":
      return value.toString();
    case "function":
      return value.name ? `function ${value.name}` : "a function";
    case "object": {
      if (value === null) return "null";
      if (Array.isArray(value)) return `an array of ${value.length}`;
      const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
      return typeof name === "string" && name !== "Object" && name !== "" ? `a ${name}` : "an object";
    }
    default:
      return String(value);
  }
}

interface Compiled {
  readonly rules: ReadonlyMap<string, Rule>;
  readonly required: readonly string[];
  readonly names: readonly string[];
}

function compile(shape: Shape): Compiled {
  const names = Object.keys(shape);
  return {
    rules: new Map(names.map((name) => [name, shape[name]])),
    required: names.filter((name) => shape[name].required === true),
    names,
  };
}

/**
 * Undefined when every field passes; the first unknown key's name; or the
 * first field problem (path made absolute). Unknown keys win over problems,
 * since a misspelt key is the likelier mistake. Allocates only on failure.
 */
function checkFields(compiled: Compiled, value: Record<string, unknown>): Problem | string | undefined {
  let problem: Problem | undefined;
  let unknown: string | undefined;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const fieldRule = compiled.rules.get(key);
    if (fieldRule === undefined) {
      unknown ??= key;
      continue;
    }
    const item = value[key];
    if (item === undefined || problem !== undefined) continue;
    const found = fieldRule.check(item);
    if (found !== undefined) problem = { ...found, path: `${key}${found.path}` };
  }
  if (unknown !== undefined) return unknown;
  if (problem !== undefined) return problem;
  for (const key of compiled.required) {
    if (value[key] === undefined) return { path: key, value: undefined, hint: `expected ${compiled.rules.get(key)!.expected} (required)` };
  }
  return undefined;
}

function keyPath(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${show(key)}]`;
}

function joinExpected(rules: readonly Rule[]): string {
  const words = rules.map((item) => item.expected);
  return words.length === 1 ? words[0] : `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`;
}
