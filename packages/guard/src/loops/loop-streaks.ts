import type { ToolCallRecord } from "./tool-call-record";

/**
 * The pattern measurements behind each detector (internal). Every function
 * reads one run's window, oldest first, without the call being checked; a
 * record without an outcome (pending, or blocked by the detector) is skipped
 * by the outcome-based measures, so a block never resets a streak.
 */

/** The streaks and counts of {@link measureWindow}. */
export interface WindowMeasures {
  /** Consecutive unknown-tool failures of the tool at the end of the window (other tools break it). */
  unknownToolCount: number;
  /** The missing tool those failures name. */
  unknownToolName?: string;
  /**
   * How many of the latest outcomes of this exact call (tool and arguments)
   * were identical, counting back from the newest; calls of other patterns in
   * between do not break the streak.
   */
  noProgressCount: number;
  /** The outcome those calls kept returning. */
  noProgressResultHash?: string;
  /** Calls of this exact pattern anywhere in the window. */
  patternCount: number;
  /**
   * Consecutive failures of the tool with one same error, counting back over
   * this tool's calls whatever their arguments (other tools' calls between
   * them are passed over).
   */
  repeatedErrorCount: number;
}

/**
 * One backward pass over the window measuring what `unknown_tool_repeat`,
 * the breaker, `known_poll_no_progress`, `generic_repeat` and
 * `repeated_error` need (one pass because it runs before every tool call).
 */
export function measureWindow(records: readonly ToolCallRecord[], toolName: string, argsHash: string): WindowMeasures {
  let unknownToolCount = 0;
  let unknownToolName: string | undefined;
  let unknownOpen = true;
  let noProgressCount = 0;
  let noProgressResultHash: string | undefined;
  let noProgressOpen = true;
  let patternCount = 0;
  let repeatedErrorCount = 0;
  let errorHash: string | undefined;
  let errorOpen = true;

  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i];
    const sameTool = record.toolName === toolName;
    const done = record.outcome !== undefined;

    if (unknownOpen) {
      if (!sameTool) unknownOpen = false;
      else if (done) {
        if (record.unknownToolName === undefined) unknownOpen = false;
        else if (unknownToolName === undefined) {
          unknownToolName = record.unknownToolName;
          unknownToolCount = 1;
        } else if (record.unknownToolName === unknownToolName) unknownToolCount++;
        else unknownOpen = false;
      }
    }

    if (record.argsHash === argsHash) {
      patternCount++;
      if (noProgressOpen && record.resultHash !== undefined) {
        if (noProgressResultHash === undefined) {
          noProgressResultHash = record.resultHash;
          noProgressCount = 1;
        } else if (record.resultHash === noProgressResultHash) noProgressCount++;
        else noProgressOpen = false;
      }
    }

    if (errorOpen && sameTool && done) {
      if (record.outcome !== "error") errorOpen = false;
      else if (errorHash === undefined) {
        errorHash = record.resultHash;
        repeatedErrorCount = 1;
      } else if (record.resultHash === errorHash) repeatedErrorCount++;
      else errorOpen = false;
    }
  }
  return { unknownToolCount, unknownToolName, noProgressCount, noProgressResultHash, patternCount, repeatedErrorCount };
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
  // Each side's first outcome seen; two variables, not a Map: this runs before every call.
  let lastOutcome: string | undefined;
  let checkedOutcome: string | undefined;
  let stableOutcomes = true;
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i];
    const lastSide = count % 2 === 0;
    if (record.argsHash !== (lastSide ? last.argsHash : argsHash)) break;
    count++;
    const outcome = record.resultHash;
    if (outcome === undefined) continue;
    const seen = lastSide ? lastOutcome : checkedOutcome;
    if (seen === undefined) {
      if (lastSide) lastOutcome = outcome;
      else checkedOutcome = outcome;
    } else if (seen !== outcome) stableOutcomes = false;
  }
  if (count < 2) return { count: 0, stableOutcomes: false };
  return {
    count,
    pairedToolName: last.toolName,
    pairedArgsHash: last.argsHash,
    stableOutcomes: stableOutcomes && lastOutcome !== undefined && checkedOutcome !== undefined,
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
  // At most three entries: parallel arrays beat a Map here, and this runs before every call.
  const patterns: string[] = [];
  const outcomes: (string | undefined)[] = [];
  let count = 0;
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i];
    const index = patterns.indexOf(record.argsHash);
    if (index === -1) {
      if (patterns.length === CHURN_MAX_PATTERNS) break;
      patterns.push(record.argsHash);
      outcomes.push(record.resultHash);
    } else if (record.resultHash !== undefined) {
      const seen = outcomes[index];
      if (seen === undefined) outcomes[index] = record.resultHash;
      else if (seen !== record.resultHash) break;
    }
    count++;
  }
  if (patterns.length < 2 || !patterns.includes(argsHash) || outcomes.includes(undefined)) {
    return { count: 0, patterns: patterns.length };
  }
  return { count, patterns: patterns.length };
}
