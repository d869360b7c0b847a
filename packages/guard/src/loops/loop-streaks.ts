import type { ToolCallRecord } from "./tool-call-record";

/**
 * The pattern measurements behind each detector (internal). Every function
 * reads one run's window, oldest first, without the call being checked; a
 * record without an outcome (pending, or blocked by the detector) is skipped
 * by the outcome-based measures, so a block never resets a streak.
 */

/** Consecutive unknown-tool failures of `toolName` at the end of the window. */
export function unknownToolStreak(
  records: readonly ToolCallRecord[],
  toolName: string,
): { count: number; unknownToolName?: string } {
  let count = 0;
  let unknownToolName: string | undefined;
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i];
    if (record.toolName !== toolName) break;
    if (record.outcome === undefined) continue;
    if (record.unknownToolName === undefined) break;
    if (unknownToolName === undefined) unknownToolName = record.unknownToolName;
    else if (record.unknownToolName !== unknownToolName) break;
    count++;
  }
  return { count, unknownToolName };
}

/**
 * How many of the latest outcomes of this exact call (tool and arguments) were
 * identical, counting back from the newest; calls of other patterns in
 * between do not break the streak.
 */
export function noProgressStreak(
  records: readonly ToolCallRecord[],
  argsHash: string,
): { count: number; resultHash?: string } {
  let count = 0;
  let resultHash: string | undefined;
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i];
    if (record.argsHash !== argsHash || record.resultHash === undefined) continue;
    if (resultHash === undefined) resultHash = record.resultHash;
    else if (record.resultHash !== resultHash) break;
    count++;
  }
  return { count, resultHash };
}

/** Calls of this exact pattern anywhere in the window. */
export function patternCount(records: readonly ToolCallRecord[], argsHash: string): number {
  let count = 0;
  for (const record of records) if (record.argsHash === argsHash) count++;
  return count;
}

/**
 * The alternation A, B, A, B … at the end of the window that the checked
 * call (`argsHash`) would continue. `count` is the alternating recorded calls;
 * `stableOutcomes` holds when each side has an outcome and all of a side's
 * outcomes are identical.
 */
export function pingPongStreak(
  records: readonly ToolCallRecord[],
  argsHash: string,
): { count: number; pairedToolName?: string; pairedArgsHash?: string; stableOutcomes: boolean } {
  const last = records.at(-1);
  if (last === undefined || last.argsHash === argsHash) return { count: 0, stableOutcomes: false };

  let count = 0;
  const outcomes = new Map<string, string>();
  let stableOutcomes = true;
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i];
    const expected = count % 2 === 0 ? last.argsHash : argsHash;
    if (record.argsHash !== expected) break;
    count++;
    if (record.resultHash === undefined) continue;
    const seen = outcomes.get(record.argsHash);
    if (seen === undefined) outcomes.set(record.argsHash, record.resultHash);
    else if (seen !== record.resultHash) stableOutcomes = false;
  }
  if (count < 2) return { count: 0, stableOutcomes: false };
  return {
    count,
    pairedToolName: last.toolName,
    pairedArgsHash: last.argsHash,
    stableOutcomes: stableOutcomes && outcomes.size === 2,
  };
}

/** Most argument patterns an `argument_churn` cycle may hold. */
const CHURN_MAX_PATTERNS = 3;

/**
 * The longest tail of the window made of at most three call patterns, the
 * checked one among them, where every pattern kept returning one same
 * outcome. `patterns` is how many distinct patterns the tail holds.
 */
export function churnStreak(
  records: readonly ToolCallRecord[],
  argsHash: string,
): { count: number; patterns: number } {
  const outcomes = new Map<string, string | undefined>();
  let count = 0;
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i];
    if (!outcomes.has(record.argsHash)) {
      if (outcomes.size === CHURN_MAX_PATTERNS) break;
      outcomes.set(record.argsHash, record.resultHash);
    } else if (record.resultHash !== undefined) {
      const seen = outcomes.get(record.argsHash);
      if (seen === undefined) outcomes.set(record.argsHash, record.resultHash);
      else if (seen !== record.resultHash) break;
    }
    count++;
  }
  if (!outcomes.has(argsHash) || outcomes.size < 2) return { count: 0, patterns: outcomes.size };
  for (const outcome of outcomes.values()) if (outcome === undefined) return { count: 0, patterns: outcomes.size };
  return { count, patterns: outcomes.size };
}

/**
 * Consecutive failures of `toolName` with one same error, counting back over
 * this tool's calls whatever their arguments (other tools' calls in between
 * are passed over).
 */
export function repeatedErrorStreak(records: readonly ToolCallRecord[], toolName: string): number {
  let count = 0;
  let errorHash: string | undefined;
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i];
    if (record.toolName !== toolName || record.outcome === undefined) continue;
    if (record.outcome !== "error") break;
    if (errorHash === undefined) errorHash = record.resultHash;
    else if (record.resultHash !== errorHash) break;
    count++;
  }
  return count;
}
