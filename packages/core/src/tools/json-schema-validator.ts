import type { JsonSchema } from "../model/model-provider";

/**
 * Checks `value` against the subset of JSON Schema that tool parameters use
 * (type, properties, required, additionalProperties, items, enum, const,
 * anyOf/oneOf, numeric and length bounds). Returns one line per problem,
 * each naming the path; an empty list means valid. Keywords outside the
 * subset are ignored rather than rejected.
 */
export function validateJsonSchema(schema: JsonSchema, value: unknown, path = "arguments"): string[] {
  const problems: string[] = [];
  check(schema, value, path, problems);
  return problems;
}

function check(schema: JsonSchema, value: unknown, path: string, problems: string[]): void {
  if (typeof schema !== "object" || schema === null) return;
  const type = schema["type"];
  if (type !== undefined) {
    const allowed = Array.isArray(type) ? (type as string[]) : [type as string];
    if (!allowed.some((t) => matchesType(t, value))) {
      problems.push(`${path}: expected ${allowed.join(" or ")}, got ${describe(value)}`);
      return;
    }
  }
  if (Array.isArray(schema["enum"]) && !(schema["enum"] as unknown[]).some((option) => deepEqual(option, value))) {
    problems.push(`${path}: expected one of ${JSON.stringify(schema["enum"])}, got ${JSON.stringify(value)}`);
  }
  if ("const" in schema && !deepEqual(schema["const"], value)) {
    problems.push(`${path}: expected ${JSON.stringify(schema["const"])}, got ${JSON.stringify(value)}`);
  }
  for (const keyword of ["anyOf", "oneOf"] as const) {
    const options = schema[keyword];
    if (Array.isArray(options) && !options.some((option) => validateJsonSchema(option as JsonSchema, value, path).length === 0)) {
      problems.push(`${path}: matches none of the allowed shapes (${keyword})`);
    }
  }
  if (typeof value === "number") {
    if (typeof schema["minimum"] === "number" && value < schema["minimum"]) problems.push(`${path}: must be ≥ ${schema["minimum"]}`);
    if (typeof schema["maximum"] === "number" && value > schema["maximum"]) problems.push(`${path}: must be ≤ ${schema["maximum"]}`);
  }
  if (typeof value === "string") {
    if (typeof schema["minLength"] === "number" && value.length < schema["minLength"]) {
      problems.push(`${path}: must have at least ${schema["minLength"]} characters`);
    }
    if (typeof schema["maxLength"] === "number" && value.length > schema["maxLength"]) {
      problems.push(`${path}: must have at most ${schema["maxLength"]} characters`);
    }
  }
  if (Array.isArray(value) && typeof schema["items"] === "object" && schema["items"] !== null) {
    value.forEach((item, index) => check(schema["items"] as JsonSchema, item, `${path}[${index}]`, problems));
  }
  if (isPlainObject(value)) {
    const properties = (schema["properties"] ?? {}) as Record<string, JsonSchema>;
    for (const name of (schema["required"] ?? []) as string[]) {
      if (!(name in value) || value[name] === undefined) problems.push(`${path}.${name}: is required`);
    }
    for (const [name, item] of Object.entries(value)) {
      if (name in properties) check(properties[name], item, `${path}.${name}`, problems);
      else if (schema["additionalProperties"] === false) problems.push(`${path}.${name}: is not an accepted argument`);
    }
  }
}

function matchesType(type: string, value: unknown): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "array":
      return Array.isArray(value);
    case "object":
      return isPlainObject(value);
    case "null":
      return value === null;
    default:
      return true;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value === "number" && !Number.isFinite(value) ? String(value) : typeof value;
}

function deepEqual(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
