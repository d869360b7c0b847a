/**
 * The fields of a {@link ReachBudget} as the policy header and the clamp
 * read them: their limits and meaning, the checks that name what a field
 * should be, and the normalized, frozen form both produce.
 * @internal
 */
import type { ReachBudget } from "./reach-budget";

/** @internal A numeric field of a budget and its one-letter key in the header. */
export interface NumberField {
  readonly key: "d" | "m" | "t" | "c" | "e";
  readonly name: "depth" | "memoryMb" | "tokens" | "costUsd" | "deadline";
  readonly integer: boolean;
  readonly max: number;
  readonly meaning: string;
}

/** @internal The numeric fields of a budget, in the order a header writes them. */
export const NUMBER_FIELDS: readonly NumberField[] = [
  { key: "d", name: "depth", integer: true, max: Number.MAX_SAFE_INTEGER, meaning: "agent entries left" },
  { key: "m", name: "memoryMb", integer: false, max: Number.MAX_SAFE_INTEGER, meaning: "memory growth left, in MB" },
  { key: "t", name: "tokens", integer: true, max: Number.MAX_SAFE_INTEGER, meaning: "model tokens left" },
  { key: "c", name: "costUsd", integer: false, max: Number.MAX_SAFE_INTEGER, meaning: "US dollars left" },
  // The latest instant a Date can hold.
  { key: "e", name: "deadline", integer: false, max: 8.64e15, meaning: "epoch milliseconds" },
];

/** @internal The fields of a budget, in the documented order. */
export const BUDGET_KEYS: readonly string[] = ["depth", "memoryMb", "zones", "tokens", "costUsd", "deadline"];

/** @internal What `value` should be, when it is not a finite value of `field`; `undefined` when it is. */
export function finiteProblem(value: unknown, field: NumberField): string | undefined {
  const ok = typeof value === "number" && Number.isFinite(value) && value >= 0 && value <= field.max && (!field.integer || Number.isInteger(value));
  return ok ? undefined : `a non-negative ${field.integer ? "integer" : "number"} ≤ ${field.max} (${field.meaning})`;
}

/** @internal What a zone list should be, when `value` is not one; `undefined` when it is. */
export function zonesProblem(value: unknown): string | undefined {
  const ok = Array.isArray(value) && value.every((zone) => typeof zone === "string" && zone !== "");
  return ok ? undefined : "an array of non-empty zone names";
}

/** @internal A mutable budget being built; frozen before it is returned. */
export type BudgetDraft = { -readonly [K in keyof ReachBudget]: ReachBudget[K] };

/**
 * `budget` checked (a `TypeError` naming the field) and normalized: a frozen
 * copy without the fields that set no limit (absent or `Infinity`, except
 * `depth`, which stays), `-0` as `0`, `zones` a frozen copy.
 * @internal
 */
export function normalizeBudget(budget: unknown, owner: string): ReachBudget {
  if (typeof budget !== "object" || budget === null || Array.isArray(budget)) {
    throw new TypeError(`${owner}: the budget must be an object such as { depth: 3, tokens: 20000 }, got ${describe(budget)}`);
  }
  const record = budget as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!BUDGET_KEYS.includes(key)) throw new TypeError(`${owner}: unknown budget field '${key}' (known: ${BUDGET_KEYS.join(", ")})`);
  }
  const draft: BudgetDraft = { depth: 0 };
  for (const field of NUMBER_FIELDS) {
    const value = record[field.name];
    if (value === undefined && field.name !== "depth") continue;
    if (value === Infinity) {
      if (field.name === "depth") draft.depth = Infinity;
      continue;
    }
    const problem = finiteProblem(value, field);
    if (problem !== undefined) {
      throw new TypeError(`${owner}: budget field '${field.name}' must be ${problem}, or Infinity for no limit, got ${describe(value)}`);
    }
    draft[field.name] = (value as number) + 0; // -0 → 0
  }
  if (record.zones !== undefined) {
    const problem = zonesProblem(record.zones);
    if (problem !== undefined) throw new TypeError(`${owner}: budget field 'zones' must be ${problem}, got ${describe(record.zones)}`);
    draft.zones = Object.freeze([...(record.zones as string[])]);
  }
  return ordered(draft);
}

/** @internal A frozen budget with its fields in the documented order. */
export function ordered(draft: BudgetDraft): ReachBudget {
  const result: BudgetDraft = { depth: draft.depth };
  for (const name of BUDGET_KEYS) {
    const value = draft[name as keyof BudgetDraft];
    if (value !== undefined) (result as Record<string, unknown>)[name] = value;
  }
  return Object.freeze(result);
}

/** @internal A short description of a value for a message: numbers as they are, anything else by type (never its content). */
export function describe(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a value of type ${typeof value}`;
}
