import type { ReachBudget } from "./reach-budget";
import { NUMBER_FIELDS, describe, normalizeBudget, ordered, zonesProblem, type BudgetDraft, type NumberField } from "./budget-fields";

/**
 * The budget a caller passes on to a callee in another process: its
 * remaining budget as it is, checked and normalized (a frozen copy; fields
 * without a limit — absent or `Infinity` — left out, `depth` kept).
 *
 * `depth` is not decremented: it already reflects the caller's own Agent
 * entry, and the callee's Agent entry will use one level, so a callee that
 * receives `depth: 0` refuses to enter an agent (`ReachExceededError`).
 *
 * @throws TypeError naming the field when the budget is not what it should be.
 * @example
 * ```ts
 * const header = encodePolicyHeader(passOnBudget(run.remaining(depth)));
 * ```
 */
export function passOnBudget(remaining: ReachBudget): ReachBudget {
  return normalizeBudget(remaining, "passOnBudget");
}

/**
 * The local limits a received budget is clamped to: the `maxLogicDepth`,
 * `maxMemoryMb`, `allowedZones`, `maxTokens`, `maxCostUsd` and `timeoutMs` of
 * a policy (a `ReachLimits` or `ReachPolicyOptions` fits; other keys are
 * ignored). A limit left out, or `Infinity`, sets no limit.
 */
export interface LocalReachLimits {
  readonly maxLogicDepth: number;
  readonly maxMemoryMb?: number;
  readonly allowedZones?: readonly string[];
  readonly maxTokens?: number;
  readonly maxCostUsd?: number;
  readonly timeoutMs?: number;
}

const LOCAL_NUMBERS = ["maxLogicDepth", "maxMemoryMb", "maxTokens", "maxCostUsd", "timeoutMs"] as const;

/**
 * A budget received from a caller, clamped to this process's own limits: it
 * never allows more than either side — the smaller depth, memory, tokens and
 * cost, the zones both allow (in the received order), the earlier of the
 * received deadline and `now + local.timeoutMs`. A field neither side limits
 * is left out (`depth` is then `Infinity`); a local limit larger than a
 * header can carry (above `Number.MAX_SAFE_INTEGER`, or a deadline after
 * the year 275760) counts as no limit.
 *
 * @param now epoch ms the local timeout counts from. @default Date.now()
 * @throws TypeError naming the field or limit when `received` or `local` is not what it should be.
 * @example
 * ```ts
 * const budget = clampBudget(decodePolicyHeader(header), reach.limits);
 * ```
 */
export function clampBudget(received: ReachBudget, local: LocalReachLimits, now: number = Date.now()): ReachBudget {
  const budget = normalizeBudget(received, "clampBudget");
  if (typeof local !== "object" || local === null || Array.isArray(local)) {
    throw new TypeError(`clampBudget: the local limits must be an object such as { maxLogicDepth: 5 }, got ${describe(local)}`);
  }
  for (const name of LOCAL_NUMBERS) {
    const value = local[name];
    if (value === undefined && name !== "maxLogicDepth") continue;
    if (!(typeof value === "number" && value >= 0 && (value === Infinity || (name !== "maxLogicDepth" && name !== "maxTokens") || Number.isInteger(value)))) {
      throw new TypeError(`clampBudget: local limit '${name}' must be a non-negative ${name === "maxLogicDepth" || name === "maxTokens" ? "integer" : "number"} or Infinity, got ${describe(value)}`);
    }
  }
  if (local.allowedZones !== undefined && zonesProblem(local.allowedZones) !== undefined) {
    throw new TypeError(`clampBudget: local limit 'allowedZones' must be ${zonesProblem(local.allowedZones)!}, got ${describe(local.allowedZones)}`);
  }
  if (typeof now !== "number" || !Number.isFinite(now)) throw new TypeError(`clampBudget: 'now' must be a finite number of epoch ms, got ${describe(now)}`);

  // A local limit beyond what a header can carry is no limit: no caller could have sent more.
  const least = (received: number | undefined, limit: number | undefined, name: NumberField["name"]): number => {
    const max = NUMBER_FIELDS.find((field) => field.name === name)!.max;
    return Math.min(received ?? Infinity, limit === undefined || limit > max ? Infinity : limit);
  };
  const draft: BudgetDraft = {
    depth: least(budget.depth, local.maxLogicDepth, "depth"),
    memoryMb: least(budget.memoryMb, local.maxMemoryMb, "memoryMb"),
    tokens: least(budget.tokens, local.maxTokens, "tokens"),
    costUsd: least(budget.costUsd, local.maxCostUsd, "costUsd"),
    deadline: least(budget.deadline, now + (local.timeoutMs ?? Infinity), "deadline"),
  };
  for (const name of ["memoryMb", "tokens", "costUsd", "deadline"] as const) {
    if (draft[name] === Infinity) delete draft[name];
  }
  if (budget.zones !== undefined && local.allowedZones !== undefined) {
    const allowed = new Set(local.allowedZones);
    draft.zones = Object.freeze([...new Set(budget.zones)].filter((zone) => allowed.has(zone)));
  } else if (budget.zones !== undefined || local.allowedZones !== undefined) {
    draft.zones = Object.freeze([...(budget.zones ?? local.allowedZones!)]);
  }
  return ordered(draft);
}
