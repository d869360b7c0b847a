/** A JSON Schema object, as tool parameters carry it (the same shape as core's `JsonSchema`). */
export type JsonSchemaObject = { readonly [key: string]: unknown };

/** Problems listed before the rest are only counted ("… and N more problems"). */
export const MAX_LISTED_PROBLEMS = 20;
/** Characters of problem text listed before the rest are only counted. */
const MAX_PROBLEM_TEXT = 4000;
/** Longest path or quoted value shown in one problem line. */
const MAX_QUOTED = 200;

/**
 * Checks `value` against the subset of JSON Schema that tool parameters use
 * (type, properties, required, additionalProperties, items, enum, const,
 * anyOf/oneOf, numeric and length bounds). Returns one line per problem,
 * each naming the path; an empty list means valid. Keywords outside the
 * subset are ignored rather than rejected.
 *
 * Only own properties count, on both sides: an argument named `constructor`,
 * `toString` or `__proto__` (which `JSON.parse` makes an own key) is an
 * argument like any other, and `properties` / `required` never match
 * `Object.prototype`. What comes back is bounded, since it goes back to the
 * model: at most {@link MAX_LISTED_PROBLEMS} lines (about 4 KB), paths and
 * quoted values cut at 200 characters, then one `… and N more problems` line.
 */
export function validateJsonSchema(schema: JsonSchemaObject, value: unknown, path = "arguments"): string[] {
  const problems = new Problems(MAX_LISTED_PROBLEMS);
  check(schema, value, path, problems);
  return problems.lines();
}

/**
 * Bounds a list of problem lines the same way (for validators other than
 * this one, e.g. a zod schema's issues): each line cut at 200 characters,
 * at most {@link MAX_LISTED_PROBLEMS} lines, then `… and N more problems`.
 */
export function boundProblems(lines: readonly string[]): string[] {
  const problems = new Problems(MAX_LISTED_PROBLEMS);
  for (const line of lines) problems.add(clip(line, MAX_QUOTED * 2));
  return problems.lines();
}

/** Collects problem lines up to a bound and counts the rest. */
class Problems {
  count = 0;
  private readonly listed: string[] = [];
  private length = 0;

  constructor(private readonly max: number) {}

  /** True once nothing more will be listed (callers skip building text). */
  get full(): boolean {
    return this.listed.length >= this.max || this.length >= MAX_PROBLEM_TEXT;
  }

  add(line: string): void {
    this.count++;
    if (this.full) return;
    this.listed.push(line);
    this.length += line.length;
  }

  report(path: string, text: string): void {
    if (this.full) this.count++;
    else this.add(`${clip(path, MAX_QUOTED)}: ${text}`);
  }

  lines(): string[] {
    const more = this.count - this.listed.length;
    return more > 0 ? [...this.listed, `… and ${more} more problem${more === 1 ? "" : "s"}`] : this.listed;
  }
}

/** True when `value` matches `schema`, without building any problem text. */
function matches(schema: JsonSchemaObject, value: unknown, path: string): boolean {
  const problems = new Problems(0);
  check(schema, value, path, problems);
  return problems.count === 0;
}

function check(schema: JsonSchemaObject, value: unknown, path: string, problems: Problems): void {
  if (typeof schema !== "object" || schema === null) return;
  const type = own(schema, "type");
  if (type !== undefined) {
    const allowed = Array.isArray(type) ? (type as string[]) : [type as string];
    if (!allowed.some((t) => matchesType(t, value))) {
      problems.report(path, `expected ${allowed.join(" or ")}, got ${describe(value)}`);
      return;
    }
  }
  const options = own(schema, "enum");
  if (Array.isArray(options) && !options.some((option) => deepEqual(option, value))) {
    problems.report(path, `expected one of ${quote(options)}, got ${quote(value)}`);
  }
  if (Object.hasOwn(schema, "const") && !deepEqual(schema["const"], value)) {
    problems.report(path, `expected ${quote(schema["const"])}, got ${quote(value)}`);
  }
  for (const keyword of ["anyOf", "oneOf"] as const) {
    const alternatives = own(schema, keyword);
    if (Array.isArray(alternatives) && !alternatives.some((alternative) => matches(alternative as JsonSchemaObject, value, path))) {
      problems.report(path, `matches none of the allowed shapes (${keyword})`);
    }
  }
  if (typeof value === "number") {
    const minimum = own(schema, "minimum");
    const maximum = own(schema, "maximum");
    if (typeof minimum === "number" && value < minimum) problems.report(path, `must be ≥ ${minimum}`);
    if (typeof maximum === "number" && value > maximum) problems.report(path, `must be ≤ ${maximum}`);
  }
  if (typeof value === "string") {
    const minLength = own(schema, "minLength");
    const maxLength = own(schema, "maxLength");
    if (typeof minLength === "number" && value.length < minLength) problems.report(path, `must have at least ${minLength} characters`);
    if (typeof maxLength === "number" && value.length > maxLength) problems.report(path, `must have at most ${maxLength} characters`);
  }
  const items = own(schema, "items");
  if (Array.isArray(value) && typeof items === "object" && items !== null) {
    for (let index = 0; index < value.length; index++) check(items as JsonSchemaObject, value[index], `${path}[${index}]`, problems);
  }
  if (isPlainObject(value)) {
    const declared = own(schema, "properties");
    const properties = typeof declared === "object" && declared !== null ? (declared as Record<string, JsonSchemaObject>) : undefined;
    const required = own(schema, "required");
    if (Array.isArray(required)) {
      for (const name of required as unknown[]) {
        if (typeof name !== "string") continue;
        if (!Object.hasOwn(value, name) || value[name] === undefined) problems.report(`${path}.${name}`, "is required");
      }
    }
    const closed = own(schema, "additionalProperties") === false;
    // Object.keys lists a literal "__proto__" key that JSON.parse created; value[name] reads that own key.
    for (const name of Object.keys(value)) {
      if (properties !== undefined && Object.hasOwn(properties, name)) check(properties[name], value[name], `${path}.${name}`, problems);
      else if (closed) problems.report(`${path}.${name}`, "is not an accepted argument");
    }
  }
}

/** An own keyword of the schema (a schema parsed from JSON may even hold `__proto__`). */
function own(schema: JsonSchemaObject, keyword: string): unknown {
  return Object.hasOwn(schema, keyword) ? schema[keyword] : undefined;
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

/** JSON of a value for a message, cut at 200 characters (long strings are cut before serialising). */
function quote(value: unknown): string {
  const cut = typeof value === "string" && value.length > MAX_QUOTED ? value.slice(0, MAX_QUOTED) : value;
  return clip(json(cut) ?? String(value), MAX_QUOTED);
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function json(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const left = json(a);
  return left !== undefined && left === json(b);
}
