import "reflect-metadata";
import type { JsonSchema } from "../model/model-provider";

/** A parameter as read from a function's source. */
export interface SignatureParameter {
  readonly name: string;
  /** True when the parameter has a default value (so the model may omit it). */
  readonly optional: boolean;
  /** The default's source text, when there is one. */
  readonly defaultSource?: string;
}

/**
 * Reads the parameter list of a function or method from its source text.
 * Returns undefined when a parameter cannot be named (destructuring, rest),
 * so the caller can ask for an explicit schema instead of guessing.
 */
export function readSignature(fn: (...args: never[]) => unknown): SignatureParameter[] | undefined {
  const source = Function.prototype.toString.call(fn);
  const open = source.indexOf("(");
  if (open < 0) return singleArrowParameter(source);
  const close = matchingParen(source, open);
  if (close < 0) return undefined;
  const head = source.slice(0, open);
  if (head.includes("=>")) return singleArrowParameter(source);
  const parameters: SignatureParameter[] = [];
  for (const raw of splitTopLevel(source.slice(open + 1, close))) {
    const text = raw.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "").trim();
    if (text === "") continue;
    if (text.startsWith("{") || text.startsWith("[") || text.startsWith("...")) return undefined;
    const equals = text.indexOf("=");
    if (equals < 0) parameters.push({ name: text, optional: false });
    else parameters.push({ name: text.slice(0, equals).trim(), optional: true, defaultSource: text.slice(equals + 1).trim() });
  }
  return parameters;
}

function singleArrowParameter(source: string): SignatureParameter[] | undefined {
  const match = /^\s*(?:async\s+)?([A-Za-z_$][\w$]*)\s*=>/.exec(source);
  return match ? [{ name: match[1], optional: false }] : undefined;
}

function matchingParen(source: string, open: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let i = open; i < source.length; i++) {
    const char = source[i];
    if (quote !== undefined) {
      if (char === "\\") i++;
      else if (char === quote) quote = undefined;
      continue;
    }
    if (char === '"' || char === "'" || char === "`") quote = char;
    else if (char === "(" || char === "[" || char === "{") depth++;
    else if (char === ")" || char === "]" || char === "}") {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

function splitTopLevel(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const char = list[i];
    if (quote !== undefined) {
      if (char === "\\") i++;
      else if (char === quote) quote = undefined;
      continue;
    }
    if (char === '"' || char === "'" || char === "`") quote = char;
    else if (char === "(" || char === "[" || char === "{") depth++;
    else if (char === ")" || char === "]" || char === "}") depth--;
    else if (char === "," && depth === 0) {
      parts.push(list.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(list.slice(start));
  return parts;
}

/**
 * A JSON Schema derived from a signature: one property per parameter, typed
 * from `design:paramtypes` (present when the method has a decorator and
 * `emitDecoratorMetadata` is on) or else from the default value's literal;
 * parameters with defaults are not required.
 */
export function schemaFromSignature(parameters: readonly SignatureParameter[], paramTypes?: readonly unknown[]): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  parameters.forEach((parameter, index) => {
    properties[parameter.name] = propertySchema(paramTypes?.[index], parameter.defaultSource);
    if (!parameter.optional) required.push(parameter.name);
  });
  return { type: "object", properties, required };
}

function propertySchema(type: unknown, defaultSource: string | undefined): JsonSchema {
  switch (type) {
    case String:
      return { type: "string" };
    case Number:
      return { type: "number" };
    case Boolean:
      return { type: "boolean" };
    case Array:
      return { type: "array" };
    case Object:
    case undefined:
      break;
    default:
      if (typeof type === "function" && type !== Function && type !== Promise) return { type: "object" };
  }
  if (defaultSource !== undefined) {
    if (/^-?\d/.test(defaultSource)) return { type: "number" };
    if (/^["'`]/.test(defaultSource)) return { type: "string" };
    if (defaultSource === "true" || defaultSource === "false") return { type: "boolean" };
    if (defaultSource.startsWith("[")) return { type: "array" };
    if (defaultSource.startsWith("{")) return { type: "object" };
  }
  return {};
}

/** The `design:paramtypes` metadata of a method, when TypeScript emitted it. */
export function paramTypesOf(target: object, propertyKey: string): readonly unknown[] | undefined {
  return Reflect.getMetadata("design:paramtypes", target, propertyKey) as unknown[] | undefined;
}
