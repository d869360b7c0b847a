import type { ReachBudget } from "rein";
import type { BackgroundJob } from "./background-queue";

/** @internal A budget as JSON can carry it: an unlimited figure (`Infinity`) becomes `null`. */
export function budgetToJob(budget: ReachBudget): BackgroundJob["budget"] {
  const json: Record<string, number | null | readonly string[] | undefined> = {};
  for (const [figure, value] of Object.entries(budget) as [string, unknown][]) {
    if (typeof value === "number") json[figure] = Number.isFinite(value) ? value : null;
    else if (Array.isArray(value)) json[figure] = value.filter((zone): zone is string => typeof zone === "string");
  }
  return json;
}

/** @internal The budget a job carries, back as a {@link ReachBudget} (`null` is unlimited again). */
export function budgetFromJob(json: BackgroundJob["budget"]): ReachBudget {
  const budget: Record<string, number | readonly string[]> = {};
  for (const [figure, value] of Object.entries(json)) {
    if (value === null) budget[figure] = Infinity;
    else if (value !== undefined) budget[figure] = value;
  }
  if (typeof budget["depth"] !== "number") budget["depth"] = Infinity;
  return budget as unknown as ReachBudget;
}
