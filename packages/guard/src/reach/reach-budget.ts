import type { Pricing } from "../spend/pricing";

/**
 * What a call chain has LEFT to spend — like a taxi meter showing the
 * distance remaining, not the total allowed. Passed between processes in
 * the `X-Agent-Policy` header; a callee never gets more than its caller had.
 * @example
 * ```ts
 * const budget: ReachBudget = { depth: 3, memoryMb: 512, zones: ["local"], tokens: 20_000, deadline: Date.now() + 30_000 };
 * ```
 */
export interface ReachBudget {
  /** Agent entries left (logic depth). 0: no agent may be entered. */
  readonly depth: number;
  /** Memory growth left, in MB. */
  readonly memoryMb?: number;
  /** Trust zones the chain may run in. */
  readonly zones?: readonly string[];
  /** Model tokens (input + output) left. */
  readonly tokens?: number;
  /** US dollars left. */
  readonly costUsd?: number;
  /** Epoch milliseconds after which nothing more may start. */
  readonly deadline?: number;
}

/**
 * Options of a {@link ReachPolicy}: the local limits of a run (and the
 * ceiling a budget received from a caller is clamped to).
 * @example
 * ```ts
 * new ReachPolicy({ maxLogicDepth: 3, maxTokens: 50_000, timeoutMs: 60_000 });
 * ```
 */
export interface ReachPolicyOptions {
  /** Agent entries allowed on one chain. @default 5 */
  maxLogicDepth?: number;
  /** Memory allowed at depth 0, in MB; grows by `memoryGrowth` per level. @default 1024 */
  maxMemoryMb?: number;
  /** Extra memory allowed per level, as a fraction of `maxMemoryMb`. @default 0.15 */
  memoryGrowth?: number;
  /** Trust zones calls may run in. @default ["local", "docker-network"] */
  allowedZones?: readonly string[];
  /** Model tokens (input + output) a run may use. @default unlimited */
  maxTokens?: number;
  /** US dollars a run may spend (needs `pricing`). @default unlimited */
  maxCostUsd?: number;
  /** Wall-clock milliseconds a run may take. @default unlimited */
  timeoutMs?: number;
  /** Prices per model, US dollars per million tokens, for `maxCostUsd`. */
  pricing?: Pricing;
}
