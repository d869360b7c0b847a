import { GuardError } from "../errors/rein-error";

/**
 * A call or model request the reach policy refused. Like the other guard
 * errors, it reaches the model once as a tool error; a second refusal in
 * the run aborts it.
 * @example
 * ```ts
 * if (ReachError.isInstance(error)) console.error(`reach exceeded: ${error.message}`);
 * ```
 */
export class ReachError extends GuardError {
  static {
    this.defineErrorName("ReachError");
  }
}

/** Which budget a {@link ReachExceededError} ran out of. */
export type ReachDimension = "depth" | "tokens" | "cost" | "deadline";

/**
 * A budget ran out: logic depth (Agent entries), tokens, cost or the
 * deadline. `used` is what the refused step would have reached.
 * @example
 * ```ts
 * err.message; // "reach exceeded: logic depth 6 > 5 (Agent entries on this chain) — ..."
 * ```
 */
export class ReachExceededError extends ReachError {
  static {
    this.defineErrorName("ReachExceededError");
  }

  readonly dimension: ReachDimension;
  readonly used: number;
  readonly limit: number;

  constructor(dimension: ReachDimension, used: number, limit: number, what = "") {
    super(`reach exceeded: ${describe(dimension, used, limit)}${what === "" ? "" : ` (${what})`} — ${ADVICE[dimension]}`);
    this.dimension = dimension;
    this.used = used;
    this.limit = limit;
  }
}

/**
 * Memory grew past what the run may use at its depth: `maxMemoryMb * (1 +
 * memoryGrowth * depth)`, measured as growth since the run started.
 */
export class MemoryReachExceededError extends ReachError {
  static {
    this.defineErrorName("MemoryReachExceededError");
  }

  readonly growthMb: number;
  readonly limitMb: number;

  constructor(growthMb: number, limitMb: number) {
    super(
      `reach exceeded: memory grew ${growthMb.toFixed(1)} MB since the run started, over the ${limitMb.toFixed(1)} MB allowed at this depth — ` +
        `do the work with less held in memory, or raise maxMemoryMb / memoryGrowth`,
    );
    this.growthMb = growthMb;
    this.limitMb = limitMb;
  }
}

/** The call would run in a trust zone the policy does not allow. */
export class UntrustedZoneError extends ReachError {
  static {
    this.defineErrorName("UntrustedZoneError");
  }

  readonly zone: string;
  readonly allowedZones: readonly string[];

  constructor(zone: string, allowedZones: readonly string[]) {
    super(
      `reach refused: this process runs in zone '${zone}', which is not one of the allowed zones (${allowedZones.join(", ")}) — ` +
        `run it where it is allowed, or add the zone to allowedZones (REIN_ZONE names the zone explicitly)`,
    );
    this.zone = zone;
    this.allowedZones = allowedZones;
  }
}

function describe(dimension: ReachDimension, used: number, limit: number): string {
  switch (dimension) {
    case "depth":
      return `logic depth ${used} > ${limit} (Agent entries on this chain)`;
    case "tokens":
      return `${used} tokens would pass the budget of ${limit}`;
    case "cost":
      return `$${used.toFixed(4)} would pass the budget of $${limit.toFixed(4)}`;
    case "deadline":
      return `${used} ms elapsed, past the deadline of ${limit} ms`;
  }
}

const ADVICE: Record<ReachDimension, string> = {
  depth: "answer with what this level can do instead of delegating further",
  tokens: "finish with what you have; the run's token budget is spent",
  cost: "finish with what you have; the run's cost budget is spent",
  deadline: "finish now with what you have; the run's time is up",
};
