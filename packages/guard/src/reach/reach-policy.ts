import type { ReachPolicyOptions } from "./reach-budget";
import { detectZone } from "./environment";
import { MemoryReachExceededError, ReachExceededError, UntrustedZoneError } from "./reach-limit-errors";

/**
 * Figures to check against a policy ({@link ReachPolicy.check}); each one
 * left out is not checked (the zone defaults to this process's).
 */
export interface ReachFigures {
  /** Logic depth: Agent entries on the chain. */
  readonly depth?: number;
  /** Memory growth since the run started, in MB. */
  readonly memoryGrowthMb?: number;
  /** @default detectZone() */
  readonly zone?: string;
  /** Tokens used (input + output). */
  readonly tokens?: number;
  readonly costUsd?: number;
  readonly elapsedMs?: number;
}

/** The limits of a {@link ReachPolicy}, every default filled in. */
export interface ReachLimits {
  readonly maxLogicDepth: number;
  readonly maxMemoryMb: number;
  readonly memoryGrowth: number;
  readonly allowedZones: readonly string[];
  readonly maxTokens: number;
  readonly maxCostUsd: number;
  readonly timeoutMs: number;
  readonly pricing: ReachPolicyOptions["pricing"];
}

const DEFAULTS: ReachLimits = Object.freeze({
  maxLogicDepth: 5,
  maxMemoryMb: 1024,
  memoryGrowth: 0.15,
  allowedZones: Object.freeze(["local", "docker-network"]),
  maxTokens: Infinity,
  maxCostUsd: Infinity,
  timeoutMs: Infinity,
  pricing: undefined,
});

const KEYS = new Set<string>(["maxLogicDepth", "maxMemoryMb", "memoryGrowth", "allowedZones", "maxTokens", "maxCostUsd", "timeoutMs", "pricing"]);

/**
 * The reach policy of a runtime: how deep agents may nest (logic depth
 * counts Agent entries only), how much memory a run may grow by, which
 * trust zones it may run in, and the tokens, cost and wall clock a run may
 * use. A run takes a snapshot of the limits when it starts
 * ({@link limits}); {@link update} (a config reload) changes them for runs
 * that start later and never loosens a run in flight.
 * @example
 * ```ts
 * const reach = new ReachPolicy({ maxLogicDepth: 3, maxTokens: 50_000, timeoutMs: 60_000 });
 * const runtime = new Runtime({ reach });
 * ```
 */
export class ReachPolicy {
  #limits: ReachLimits;

  /** @throws TypeError naming the option when a value is not what it should be. */
  constructor(options: ReachPolicyOptions = {}) {
    this.#limits = resolveReachLimits(options, "ReachPolicy");
  }

  /** The limits now (a frozen snapshot). */
  get limits(): ReachLimits {
    return this.#limits;
  }

  /**
   * Checks figures against the limits and throws the {@link ReachError}
   * that applies: the zone (default: {@link detectZone}), the logic depth,
   * memory growth at that depth, tokens, cost and elapsed time. The runtime
   * runs these checks on every Agent entry and before every model request
   * (through the run's `ReachRun`); call it yourself to check work of your
   * own against the same policy.
   * @example
   * ```ts
   * policy.check({ depth: 3, tokens: 12_000, elapsedMs: Date.now() - startedAt });
   * ```
   */
  check(figures: ReachFigures = {}): void {
    const limits = this.#limits;
    const zone = figures.zone ?? detectZone();
    if (!limits.allowedZones.includes(zone)) throw new UntrustedZoneError(zone, limits.allowedZones);
    const depth = figures.depth ?? 0;
    if (depth > limits.maxLogicDepth) throw new ReachExceededError("depth", depth, limits.maxLogicDepth);
    const memoryLimit = limits.maxMemoryMb * (1 + limits.memoryGrowth * depth);
    if (figures.memoryGrowthMb !== undefined && figures.memoryGrowthMb > memoryLimit) throw new MemoryReachExceededError(figures.memoryGrowthMb, memoryLimit);
    if (figures.tokens !== undefined && figures.tokens > limits.maxTokens) throw new ReachExceededError("tokens", figures.tokens, limits.maxTokens);
    if (figures.costUsd !== undefined && figures.costUsd > limits.maxCostUsd) throw new ReachExceededError("cost", figures.costUsd, limits.maxCostUsd);
    if (figures.elapsedMs !== undefined && figures.elapsedMs > limits.timeoutMs) throw new ReachExceededError("deadline", figures.elapsedMs, limits.timeoutMs);
  }

  /**
   * Replaces the limits (a config reload). Runs already going keep the
   * limits they started with, or these when tighter.
   * @throws TypeError naming the option when a value is not what it should be; the limits stay as they were.
   */
  update(options: ReachPolicyOptions): void {
    this.#limits = resolveReachLimits(options, "ReachPolicy.update");
  }
}

/** The limits `options` give, defaults filled in; a `TypeError` names a bad option. @internal */
export function resolveReachLimits(options: ReachPolicyOptions, owner: string): ReachLimits {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError(`${owner}: options must be an object such as { maxLogicDepth: 5 }, got ${String(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!KEYS.has(key)) throw new TypeError(`${owner}: unknown option '${key}' (known: ${[...KEYS].join(", ")})`);
  }
  const positive = (name: keyof ReachPolicyOptions, integer: boolean): number | undefined => {
    const value = options[name] as unknown;
    if (value === undefined) return undefined;
    const ok = typeof value === "number" && (value === Infinity || (Number.isFinite(value) && value > 0 && (!integer || Number.isInteger(value))));
    if (!ok) throw new TypeError(`${owner}: option '${name}' must be a positive ${integer ? "integer" : "number"}, got ${JSON.stringify(value)}`);
    return value as number;
  };
  const growth = options.memoryGrowth;
  if (growth !== undefined && !(typeof growth === "number" && Number.isFinite(growth) && growth >= 0)) {
    throw new TypeError(`${owner}: option 'memoryGrowth' must be a number ≥ 0 (0.15 = 15% more per level), got ${JSON.stringify(growth)}`);
  }
  const zones = options.allowedZones;
  if (zones !== undefined && !(Array.isArray(zones) && zones.length > 0 && zones.every((zone) => typeof zone === "string" && zone !== ""))) {
    throw new TypeError(`${owner}: option 'allowedZones' must be a non-empty array of zone names, got ${JSON.stringify(zones)}`);
  }
  const pricing = options.pricing;
  if (pricing !== undefined && (typeof pricing !== "object" || pricing === null || Array.isArray(pricing))) {
    throw new TypeError(`${owner}: option 'pricing' must be an object { [model]: { inputPerMTok, outputPerMTok } }`);
  }
  return Object.freeze({
    maxLogicDepth: positive("maxLogicDepth", true) ?? DEFAULTS.maxLogicDepth,
    maxMemoryMb: positive("maxMemoryMb", false) ?? DEFAULTS.maxMemoryMb,
    memoryGrowth: growth ?? DEFAULTS.memoryGrowth,
    allowedZones: zones === undefined ? DEFAULTS.allowedZones : Object.freeze([...zones]),
    maxTokens: positive("maxTokens", true) ?? DEFAULTS.maxTokens,
    maxCostUsd: positive("maxCostUsd", false) ?? DEFAULTS.maxCostUsd,
    timeoutMs: positive("timeoutMs", false) ?? DEFAULTS.timeoutMs,
    pricing,
  });
}
