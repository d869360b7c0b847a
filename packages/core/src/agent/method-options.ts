import type { ParametersSchema } from "../tools/schema";
import { isStandardSchema } from "../tools/schema";
import type { RenderRange } from "@rein/session";
import { resumableProblem, type ResumableOptions } from "../resumable/resumable-options";

/** How a method's calls show in the history of later requests. @default "full" */
export type Expose = "io" | "full" | "llm" | "hidden";

/**
 * Per-method settings, given as `static methodOptions = { name: {...} }` or
 * with the `@method({...})` decorator.
 */
export interface MethodOptions {
  /** Offer the method to the model as a tool. @default false */
  tool?: boolean;
  /** What the method does: the tool description, and the job line of its situational prefix. */
  description?: string;
  /** JSON Schema or zod schema of the tool arguments. @default derived from the signature */
  parameters?: ParametersSchema;
  /** `"full"` shows everything, `"io"` hides its model requests, `"llm"` hides its code children, `"hidden"` records nothing. @default "full" */
  expose?: Expose;
  /** How far history reaches for requests made inside the method (see {@link RenderRange}). */
  renderRange?: RenderRange;
  /**
   * Makes the method a resumable run: its `step()`s save their results, and
   * `resumeRun` finishes an interrupted run without running finished steps
   * again. An object lists `helpers` (part of the code fingerprint) and the
   * `codeChangePolicy`. See {@link ResumableOptions}.
   * @default false
   */
  resumable?: boolean | ResumableOptions;
  /** Milliseconds after which a tool call of the method fails with a timeout. */
  timeout?: number;
  /** Longer tool results are truncated before the model sees them. */
  maxResultChars?: number;
  /** The tool call needs approval before it runs. @default false */
  requiresApproval?: boolean;
  /** Repeated calls are polling (loop detection treats them as such). @default false */
  poll?: boolean;
}

const CHECKS: { readonly [K in keyof Required<MethodOptions>]: (value: unknown) => string | undefined } = {
  tool: boolean,
  description: (value) => (typeof value === "string" ? undefined : "expected a string"),
  parameters: (value) =>
    isStandardSchema(value) || (typeof value === "object" && value !== null && !Array.isArray(value))
      ? undefined
      : "expected a JSON Schema object or a zod schema",
  expose: (value) =>
    value === "io" || value === "full" || value === "llm" || value === "hidden"
      ? undefined
      : `expected "io", "full", "llm" or "hidden", got ${JSON.stringify(value)}`,
  renderRange: (value) => {
    if (typeof value !== "object" || value === null) return "expected { callers?, subcalls?, turns? }";
    for (const [key, item] of Object.entries(value)) {
      if (key !== "callers" && key !== "subcalls" && key !== "turns") return `unknown field '${key}' (expected callers, subcalls, turns)`;
      if (key === "turns") {
        if (!(Number.isInteger(item) && (item as number) > 0) && item !== Infinity) return "turns must be a positive integer or Infinity";
      } else if (!(Number.isInteger(item) && (item as number) >= 0) && item !== Infinity) return `${key} must be a non-negative integer`;
    }
    return undefined;
  },
  resumable: resumableProblem,
  timeout: positiveNumber,
  maxResultChars: (value) => (Number.isInteger(value) && (value as number) > 0 ? undefined : "expected a positive integer"),
  requiresApproval: boolean,
  poll: boolean,
};

function boolean(value: unknown): string | undefined {
  return typeof value === "boolean" ? undefined : `expected true or false, got ${JSON.stringify(value)}`;
}

function positiveNumber(value: unknown): string | undefined {
  return typeof value === "number" && value > 0 && Number.isFinite(value) ? undefined : "expected a positive number of milliseconds";
}

/**
 * Validates one method's options. Throws a `TypeError` naming the class,
 * the method and the key.
 */
export function validateMethodOptions(className: string, methodName: string, options: unknown): MethodOptions {
  const where = `${className}.${methodName}`;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError(`Invalid methodOptions for ${where}: expected an object of options`);
  }
  for (const [key, value] of Object.entries(options)) {
    const check = CHECKS[key as keyof MethodOptions];
    if (check === undefined) {
      throw new TypeError(
        `Invalid methodOptions for ${where}: unknown key '${key}' (allowed: ${Object.keys(CHECKS).join(", ")})`,
      );
    }
    if (value === undefined) continue;
    const problem = check(value);
    if (problem !== undefined) throw new TypeError(`Invalid methodOptions for ${where}: '${key}' ${problem}`);
  }
  return options as MethodOptions;
}
