import { GuardError } from "./rein-error";

/**
 * Thrown when the tail of the call chain repeats the same sequence of two or
 * more functions more than `maxCycleRepeats` times (A → B → A → B → A → B).
 * The per-function ceiling alone would let such a cycle run `limit × k` frames.
 */
export class CycleError extends GuardError {
  static {
    this.defineErrorName("CycleError");
  }

  /** The repeating sequence, by readable name, outermost first (`["A.plan", "B.act"]`). */
  readonly cycle: string[];
  /** How many times the sequence would have repeated had the call been entered. */
  readonly repeats: number;

  constructor(cycle: string[], repeats: number) {
    super(
      `call cycle ${cycle.join(" → ")} repeated ${repeats} times — possible runaway recursion between functions; ` +
        `do the remaining work directly instead of calling back into the cycle`,
    );
    this.cycle = cycle;
    this.repeats = repeats;
  }
}

/**
 * Thrown when entering a call would make the chain longer than
 * `maxChainDepth` frames, whatever functions it holds.
 */
export class ChainDepthError extends GuardError {
  static {
    this.defineErrorName("ChainDepthError");
  }

  /** The readable name of the function that was refused. */
  readonly functionName: string;
  /** The chain length the refused call would have reached (`limit + 1`). */
  readonly depth: number;
  /** The ceiling in force. */
  readonly limit: number;

  constructor(functionName: string, depth: number, limit: number) {
    super(
      `call chain exceeded max depth ${limit} entering ${functionName} — ` +
        `flatten the work or raise maxChainDepth if this depth is intended`,
    );
    this.functionName = functionName;
    this.depth = depth;
    this.limit = limit;
  }
}
