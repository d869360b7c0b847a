/**
 * What a resume does when the code changed since the run started (or since
 * the version it last adopted):
 * - `"keep_original"`: continue only when the saved version is the one
 *   loaded here (same fingerprint); otherwise the run stays paused, naming
 *   the function that changed;
 * - `"use_latest"`: keep the finished steps' results and run the later
 *   steps with the current code, which the run adopts as its version.
 *
 * Either way, finished steps that were removed, reordered or called with
 * other input keep the run paused.
 * @default "keep_original"
 */
export type CodeChangePolicy = "keep_original" | "use_latest";

/**
 * The code change policies, by name.
 * @example
 * ```ts
 * await agent.resumeRun(runId, { codeChangePolicy: codeChangePolicy.useLatest });
 * ```
 */
export const codeChangePolicy = Object.freeze({ keepOriginal: "keep_original", useLatest: "use_latest" } as const);

/**
 * The `execution` option of an Agent (or its `static execution` class default).
 * @example
 * ```ts
 * new Pipeline({ context, execution: { codeChangePolicy: "use_latest" } });
 * ```
 */
export interface ExecutionOptions {
  /** The policy of the agent's resumable methods that set none themselves. @default "keep_original" */
  codeChangePolicy?: CodeChangePolicy;
}

/**
 * `methodOptions.resumable` as an object (`true` is `{}`).
 * @example
 * ```ts
 * static methodOptions = { process: { resumable: { helpers: [normalize], codeChangePolicy: "use_latest" } } };
 * ```
 */
export interface ResumableOptions {
  /** Functions outside the method whose code the steps depend on: part of the run's code fingerprint. @default [] */
  helpers?: readonly ((...args: never[]) => unknown)[];
  /** How a resume treats changed code (a resume can override it). @default the agent's `execution.codeChangePolicy`, else "keep_original" */
  codeChangePolicy?: CodeChangePolicy;
  /** How long a worker's lease on a running run lasts without renewal, in ms (renewed every third of it). @default 30000 */
  leaseMs?: number;
}

/** Checks `methodOptions.resumable`; returns the problem, or undefined. @internal */
export function resumableProblem(value: unknown): string | undefined {
  if (typeof value === "boolean") return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return `expected true, false or { helpers?, codeChangePolicy?, leaseMs? }, got ${JSON.stringify(value)}`;
  }
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue;
    if (key === "helpers") {
      if (!Array.isArray(item) || !item.every((helper) => typeof helper === "function")) return "helpers must be an array of functions";
    } else if (key === "codeChangePolicy") {
      if (item !== "keep_original" && item !== "use_latest") return `codeChangePolicy must be "keep_original" or "use_latest", got ${JSON.stringify(item)}`;
    } else if (key === "leaseMs") {
      if (!(typeof item === "number" && Number.isFinite(item) && item > 0)) return "leaseMs must be a positive number of milliseconds";
    } else {
      return `unknown field '${key}' (expected helpers, codeChangePolicy, leaseMs)`;
    }
  }
  return undefined;
}

/** `true` or an options object as options; undefined when the method is not resumable. @internal */
export function resumableOptionsOf(value: boolean | ResumableOptions | undefined): ResumableOptions | undefined {
  if (value === undefined || value === false) return undefined;
  return value === true ? {} : value;
}
