import type { ReachBudget } from "./reach-budget";

/**
 * The budget two sides both allow, dimension by dimension: the smaller
 * depth, memory, tokens and cost, the earlier deadline, the zones both
 * name (in `received`'s order). A dimension neither side limits stays
 * unlimited. This is how a budget received inside a run (a nested
 * `withReachBudget`, a resumed run, an entry called in-process) meets what
 * the caller has left: it can only narrow it.
 * @example
 * ```ts
 * narrowBudget({ depth: 5, tokens: 10_000 }, { depth: 1, zones: ["local"] }); // { depth: 1, tokens: 10_000, zones: ["local"] }
 * ```
 */
export function narrowBudget(received: ReachBudget, left: ReachBudget): ReachBudget {
  const budget: { -readonly [K in keyof ReachBudget]: ReachBudget[K] } = { depth: Math.min(received.depth, left.depth) };
  const memoryMb = smaller(received.memoryMb, left.memoryMb);
  if (memoryMb !== undefined) budget.memoryMb = memoryMb;
  const tokens = smaller(received.tokens, left.tokens);
  if (tokens !== undefined) budget.tokens = tokens;
  const costUsd = smaller(received.costUsd, left.costUsd);
  if (costUsd !== undefined) budget.costUsd = costUsd;
  const deadline = smaller(received.deadline, left.deadline);
  if (deadline !== undefined) budget.deadline = deadline;
  if (received.zones !== undefined && left.zones !== undefined) budget.zones = received.zones.filter((zone) => left.zones!.includes(zone));
  else if (received.zones !== undefined || left.zones !== undefined) budget.zones = received.zones ?? left.zones;
  return budget;
}

function smaller(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}
