import { GuardError } from "./rein-error";

/**
 * How many active frames of one agentic function may be nested on a call
 * chain before entering it again throws {@link RecursionError}.
 * Override per call with `runInFrame(frame, fn, { recursionLimit })`.
 * @default 5
 */
export const MAX_AGENTIC_RECURSION_DEPTH = 5;

/**
 * Thrown when a function is entered while `limit` frames of it are already
 * active on the call chain: the mark of a runaway self-call.
 *
 * @example
 * ```ts
 * err.message; // "agentic function Wiki.search exceeded max nesting depth 5 — possible runaway recursion"
 * ```
 */
export class RecursionError extends GuardError {
  static {
    this.defineErrorName("RecursionError");
  }

  /** The readable name of the function that was refused (`Researcher.research`). */
  readonly functionName: string;
  /** The nesting depth the refused call would have reached (`limit + 1`). */
  readonly depth: number;
  /** The ceiling in force for that call. */
  readonly limit: number;

  constructor(functionName: string, depth: number, limit: number) {
    super(`agentic function ${functionName} exceeded max nesting depth ${limit} — possible runaway recursion`);
    this.functionName = functionName;
    this.depth = depth;
    this.limit = limit;
  }
}
