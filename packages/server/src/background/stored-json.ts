import { storableJson } from "@rein/session";
import { safeJson } from "../safe-json";

/**
 * What a background run puts in PostgreSQL — the job's arguments and
 * outcome, its events — as `jsonb` keeps it: JSON (a bigint or a cycle
 * written as `safeJson` does) with a NUL or a lone surrogate as U+FFFD,
 * which `jsonb` refuses (the same rule as the session stores). One
 * refused value made pg-boss's unawaited completion crash the worker that
 * ran it, and the run ran again on the next.
 */

/** Rows of run events one INSERT writes at most: 2 parameters a row, and PostgreSQL takes 65,535. @internal */
export const EVENTS_PER_INSERT = 10_000;

/** `value` as JSON text a `jsonb` column takes. @internal */
export function storedJson(value: unknown): string {
  return storableJson(safeJson(value));
}

/** `value` as a `jsonb` column gives it back. @internal */
export function storedValue<T = unknown>(value: unknown): T {
  return JSON.parse(storedJson(value)) as T;
}
