import type { ReachBudget } from "./reach-budget";
import type { ReachLimits, ReachPolicy } from "./reach-policy";
import { detectZone, memoryUsageMb } from "./environment";
import { MemoryReachExceededError, ReachExceededError, UntrustedZoneError } from "./reach-limit-errors";
import { narrowBudget } from "./narrow-budget";
import { tokenCount } from "../spend/pricing";

/**
 * The live budget and usage of a running call (see `currentReach()`), as
 * the CLI status line and `reach-status` events show it.
 * @example
 * ```ts
 * const { depth, tokens, elapsedMs } = currentReach()!;
 * console.log(`[REACH] Depth ${depth.used}/${depth.limit} | ${tokens.used} tokens | ${elapsedMs} ms`);
 * ```
 */
export interface ReachStatus {
  readonly depth: { readonly used: number; readonly limit: number };
  readonly memoryMb: { readonly used: number; readonly limit: number };
  readonly zone: string;
  readonly tokens: { readonly used: number; readonly limit: number };
  readonly costUsd: { readonly used: number; readonly limit: number };
  readonly elapsedMs: number;
  /** Milliseconds left before the deadline (Infinity without one). */
  readonly remainingMs: number;
}

/** The deadline (epoch ms) each deadline error was made for: {@link ReachRun.deadlineReachedBy} reads it. */
const DEADLINE_OF = new WeakMap<object, number>();

/**
 * One run under a reach policy: the limits it started with (a reload may
 * tighten them, never loosen them), what it has used, and the checks. Made
 * by the outermost Agent entry (or a loop) of a run, or from a budget a
 * caller sent (`withReachBudget`), and shared by everything nested in it.
 * Depth is not counted here: the caller passes the depth of each entry,
 * which the call scopes carry, so nothing can be left behind by a throw,
 * an abort or Ctrl-C.
 *
 * A run started inside another (`within`: a budget received in the middle
 * of a run, or an agent with a policy of its own entered inside a run)
 * only narrows it: its limits are the smaller of the received budget (or
 * its own policy's) and what the outer run had left at that depth, its
 * usage is charged to the outer run too, and each request is checked
 * against both, so siblings spending the outer budget meanwhile are seen.
 * With `within.nested`, depths stay those of the outer run (the agent's
 * own `maxLogicDepth` counts from its entry); without it, depth starts
 * again at 0 (a received budget).
 * @internal
 */
export class ReachRun {
  readonly startedAt: number;
  readonly baselineMb: number;
  tokensUsed = 0;
  costUsed = 0;
  /** The zone this process runs in, read when the run starts. */
  readonly zone: string = detectZone();
  /** The W3C `traceparent` the run continues (received with the budget), if any. */
  traceparent: string | undefined;
  /** Limits fixed when the run started (a received budget clamps them). */
  readonly #start: ReachLimits;
  readonly #deadline: number;
  readonly #depth: number;
  readonly #tokens: number;
  readonly #cost: number;
  readonly #memoryMb: number | undefined;
  readonly #zones: readonly string[];
  /** The run this one was started inside, if any: charged and checked with it. */
  readonly #outer: ReachRun | undefined;
  /** The outer run's depth this run's depth limits count from (0 unless `within.nested`). */
  readonly #base: number;

  constructor(
    readonly policy: ReachPolicy,
    budget?: ReachBudget,
    now = Date.now(),
    within?: { readonly run: ReachRun; readonly depth: number; readonly nested?: boolean },
  ) {
    if (within !== undefined) {
      const left = within.run.remaining(within.depth);
      budget = budget === undefined ? left : narrowBudget(budget, left);
    }
    this.#outer = within?.run;
    this.#base = within?.nested === true ? within.depth : 0;
    const limits = policy.limits;
    this.#start = limits;
    this.startedAt = now;
    this.baselineMb = memoryUsageMb();
    this.#depth = this.#base + Math.min(limits.maxLogicDepth, budget?.depth ?? Infinity);
    this.#tokens = Math.min(limits.maxTokens, budget?.tokens ?? Infinity);
    this.#cost = Math.min(limits.maxCostUsd, budget?.costUsd ?? Infinity);
    this.#deadline = Math.min(now + limits.timeoutMs, budget?.deadline ?? Infinity);
    this.#memoryMb = budget?.memoryMb;
    this.#zones = budget?.zones === undefined ? limits.allowedZones : limits.allowedZones.filter((zone) => budget.zones!.includes(zone));
  }

  /** The limits in force, worked out once per policy snapshot (a reload swaps the snapshot). */
  #effective: Effective | undefined;
  #effectiveFor: ReachLimits | undefined;

  /** The run's own limits, tightened by the policy's current ones: recomputed only when the policy's limits change. */
  get #now(): Effective {
    const current = this.policy.limits;
    if (this.#effectiveFor === current) return this.#effective!;
    this.#effectiveFor = current;
    return (this.#effective = {
      depth: Math.min(this.#depth, this.#base + current.maxLogicDepth),
      tokens: Math.min(this.#tokens, current.maxTokens),
      cost: Math.min(this.#cost, current.maxCostUsd),
      deadline: Math.min(this.#deadline, this.startedAt + current.timeoutMs),
      zones: this.#zones.filter((zone) => current.allowedZones.includes(zone)),
      memoryMb: Math.min(this.#start.maxMemoryMb, current.maxMemoryMb),
      memoryGrowth: Math.min(this.#start.memoryGrowth, current.memoryGrowth),
    });
  }

  get depthLimit(): number {
    return this.#now.depth;
  }
  get tokensLimit(): number {
    return this.#now.tokens;
  }
  get costLimit(): number {
    return this.#now.cost;
  }
  get deadline(): number {
    return this.#now.deadline;
  }
  get zones(): readonly string[] {
    return this.#now.zones;
  }

  /** Memory allowed at `depth`: `maxMemoryMb * (1 + memoryGrowth * depth)`, within a received budget. */
  memoryLimitMb(depth: number): number {
    const now = this.#now;
    return Math.min(now.memoryMb * (1 + now.memoryGrowth * depth), this.#memoryMb ?? Infinity);
  }

  /** Checks an Agent entry reaching logic depth `depth`: zone, depth, memory, deadline. Throws the {@link ReachError} that applies. */
  enter(depth: number): void {
    const limits = this.#now;
    if (!limits.zones.includes(this.zone)) throw new UntrustedZoneError(this.zone, limits.zones);
    if (depth > limits.depth) throw new ReachExceededError("depth", depth, limits.depth);
    if (limits.deadline !== Infinity) {
      const now = Date.now();
      if (now > limits.deadline) throw this.deadlineError(now);
    }
    const growthMb = memoryUsageMb() - this.baselineMb;
    // A received memory budget below the local maximum is the one enforced.
    if (growthMb > limits.memoryMb || growthMb > (this.#memoryMb ?? Infinity)) {
      const memoryLimit = this.memoryLimitMb(depth);
      if (growthMb > memoryLimit) throw new MemoryReachExceededError(growthMb, memoryLimit);
    }
  }

  /**
   * Checks a model request before it is sent: what the run used plus this
   * request's estimated input must stay within the token and cost budgets,
   * and the deadline must not have passed.
   */
  beforeRequest(estimatedTokens: number, estimatedCostUsd: number, now = Date.now()): void {
    if (now > this.deadline) throw this.deadlineError(now);
    const tokens = this.tokensUsed + estimatedTokens;
    if (tokens > this.tokensLimit) throw new ReachExceededError("tokens", tokens, this.tokensLimit, "this request's input included, estimated");
    const cost = this.costUsed + estimatedCostUsd;
    if (cost > this.costLimit) throw new ReachExceededError("cost", cost, this.costLimit, "this request's input included, estimated");
    this.#outer?.beforeRequest(estimatedTokens, estimatedCostUsd, now);
  }

  /**
   * The error of the deadline at `now`: what an Agent entry or a model
   * request after it throws, and what a tool call or a model request still
   * running at it is aborted with (core's `CallLimit`).
   */
  deadlineError(now = Date.now()): ReachExceededError {
    // A timer at the deadline may fire a millisecond before Date.now() reaches it: never report less than the limit.
    const error = new ReachExceededError("deadline", Math.max(now, this.deadline) - this.startedAt, this.deadline - this.startedAt);
    DEADLINE_OF.set(error, this.deadline);
    return error;
  }

  /**
   * Whether `error` is the deadline of this run or of a run inside it whose
   * deadline is not earlier than this one's (an agent called as a tool that
   * shares the run's time): then this run's time is up too, and the error
   * ends it rather than refusing one call. A nested run's own, earlier
   * deadline is that run's refusal only.
   */
  deadlineReachedBy(error: unknown): boolean {
    const at = typeof error === "object" && error !== null ? DEADLINE_OF.get(error) : undefined;
    return at !== undefined && at >= this.deadline;
  }

  /** Adds one answered request's usage (to the run this one was started inside, too). */
  addUsage(tokens: number, costUsd: number): void {
    // A count that is negative, NaN or missing adds nothing: it never refunds a budget nor makes its checks always pass.
    const added = tokenCount(tokens);
    const spent = tokenCount(costUsd);
    this.tokensUsed += added;
    this.costUsed += spent;
    this.#outer?.addUsage(added, spent);
  }

  /** The live figures at `depth`. */
  status(depth: number, now = Date.now()): ReachStatus {
    return {
      depth: { used: depth, limit: this.depthLimit },
      memoryMb: { used: Math.max(0, memoryUsageMb() - this.baselineMb), limit: this.memoryLimitMb(depth) },
      zone: this.zone,
      tokens: { used: this.tokensUsed, limit: this.tokensLimit },
      costUsd: { used: this.costUsed, limit: this.costLimit },
      elapsedMs: now - this.startedAt,
      remainingMs: this.deadline - now,
    };
  }

  /**
   * What a call made now may pass on to another process: the budget left
   * at `depth` (the callee's own Agent entry will use one level).
   */
  remaining(depth: number): ReachBudget {
    const left = (limit: number, used: number): number | undefined => (limit === Infinity ? undefined : Math.max(0, limit - used));
    const memoryLimit = this.memoryLimitMb(depth);
    const budget: { -readonly [K in keyof ReachBudget]: ReachBudget[K] } = { depth: Math.max(0, this.depthLimit - depth), zones: this.zones };
    const tokens = left(this.tokensLimit, this.tokensUsed);
    if (tokens !== undefined) budget.tokens = tokens;
    const cost = left(this.costLimit, this.costUsed);
    if (cost !== undefined) budget.costUsd = cost;
    if (this.deadline !== Infinity) budget.deadline = this.deadline;
    if (memoryLimit !== Infinity) budget.memoryMb = Math.max(0, memoryLimit - Math.max(0, memoryUsageMb() - this.baselineMb));
    return budget;
  }
}

/** The limits of a run in force for one policy snapshot. */
interface Effective {
  readonly depth: number;
  readonly tokens: number;
  readonly cost: number;
  readonly deadline: number;
  readonly zones: readonly string[];
  readonly memoryMb: number;
  readonly memoryGrowth: number;
}
