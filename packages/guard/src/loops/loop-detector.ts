import { type LoopDetectionConfig, resolveLoopDetectionConfig } from "./loop-detection-config";
import type { LoopDetectionOptions } from "./loop-detection-options";
import type { LoopDetection, LoopDetectionResult, LoopDetectorKind, LoopLevel } from "./loop-detection-result";
import * as messages from "./loop-messages";
import { churnStreak, measureWindow, pingPongStreak } from "./loop-streaks";
import { CallHashes } from "./call-hashes";
import { hashOutcome } from "./stable-hash";
import type { ToolCallRecord } from "./tool-call-record";
import { isLoopBlock, unknownToolNameOf } from "./loop-outcomes";
import type { DetectOptions, LoopDetectorStats, ToolCallInput, ToolOutcomeInput } from "./loop-detector-inputs";

export type { DetectOptions, LoopDetectorStats, ToolCallInput, ToolOutcomeInput } from "./loop-detector-inputs";

type MutableRecord = { -readonly [K in keyof ToolCallRecord]: ToolCallRecord[K] };

interface RunHistory {
  records: MutableRecord[];
  totalCalls: number;
}

const NOT_STUCK: LoopDetectionResult = Object.freeze({ stuck: false });
const NO_RUN = "\u0000no-run";
/** Runs whose histories are kept at once; the least recently used is dropped past it. */
const MAX_TRACKED_RUNS = 256;

/** Lookup sets derived from a resolved (frozen) config, shared by the detectors built from it. */
const lookupSets = new WeakMap<
  LoopDetectionConfig,
  { pollTools: ReadonlySet<string>; volatileKeys: ReadonlySet<string>; byTool: ReadonlyMap<string, ReadonlySet<string>> }
>();

/**
 * Watches one agent's tool calls for loops that make no progress: the same
 * call repeated, a poll that never changes, two calls alternating, a few
 * argument patterns churned, one error hit again and again, a missing tool
 * retried. Pure and synchronous; it keeps only small hash records.
 *
 * Use per call: {@link detect} before the tool runs (a `critical` verdict
 * means do not run it), {@link recordCall} when it starts (also for a blocked
 * call, so the streak holds), {@link recordOutcome} when it finishes. Each
 * run id has its own window of `historySize` records.
 *
 * @example
 * ```ts
 * const detector = new ToolLoopDetector({ enabled: true });
 * const verdict = detector.detect("search", params, { runId });
 * if (!(verdict.stuck && verdict.level === "critical")) {
 *   detector.recordCall({ toolName: "search", params, runId });
 *   detector.recordOutcome({ toolName: "search", params, runId, result: await search(params) });
 * }
 * ```
 */
export class ToolLoopDetector {
  /** The resolved settings in force. */
  readonly config: LoopDetectionConfig;
  private readonly runs = new Map<string, RunHistory>();
  private readonly pollTools: ReadonlySet<string>;
  private readonly defaultVolatileKeys: ReadonlySet<string>;
  private readonly volatileKeysByTool = new Map<string, ReadonlySet<string>>();
  /** Argument hashes (cached, checked against content) and the interned hash strings of this detector. */
  private readonly hashes = new CallHashes();
  private lastRunKey: string | undefined;

  /**
   * @param config partial settings, resolved with {@link resolveLoopDetectionConfig} (detection is off unless `enabled: true`).
   * @throws {TypeError} on an unknown option or a value of the wrong type, as {@link resolveLoopDetectionConfig} does
   */
  constructor(config: LoopDetectionOptions = {}) {
    this.config = resolveLoopDetectionConfig(config);
    // A resolved config is frozen: its lookup sets are built once and shared by every detector built from it
    // (the runtime builds one detector per model-tool loop).
    let sets = lookupSets.get(this.config);
    if (sets === undefined) {
      const byTool = new Map<string, ReadonlySet<string>>();
      for (const [toolName, override] of Object.entries(this.config.toolOverrides)) {
        if (override.volatileKeys !== undefined) byTool.set(toolName, new Set(override.volatileKeys));
      }
      sets = { pollTools: new Set(this.config.pollTools), volatileKeys: new Set(this.config.volatileKeys), byTool };
      lookupSets.set(this.config, sets);
    }
    this.pollTools = sets.pollTools;
    this.defaultVolatileKeys = sets.volatileKeys;
    for (const [toolName, keys] of sets.byTool) this.volatileKeysByTool.set(toolName, keys);
  }

  /** Every record in the windows of all runs, oldest first within a run. */
  get history(): readonly ToolCallRecord[] {
    const all: ToolCallRecord[] = [];
    for (const run of this.runs.values()) all.push(...run.records);
    return all;
  }

  /** The window of one run, oldest first. */
  historyFor(runId?: string): readonly ToolCallRecord[] {
    return [...(this.runs.get(runId ?? NO_RUN)?.records ?? [])];
  }

  /**
   * Puts `records` (a run's window as {@link historyFor} gave it, kept as
   * JSON) back under `runId`, oldest first, as if recorded again: a run that
   * paused and is carried on later (another process, the next day) goes on
   * with its loop history instead of starting over. Records that are not
   * records are skipped. Nothing is kept when detection is off.
   */
  restoreHistory(runId: string | undefined, records: readonly ToolCallRecord[]): void {
    if (!this.config.enabled || !Array.isArray(records)) return;
    for (const record of records) {
      if (typeof record?.toolName !== "string" || typeof record.argsHash !== "string") continue;
      const copy: MutableRecord = { ...record, timestamp: typeof record.timestamp === "number" ? record.timestamp : Date.now() };
      if (runId === undefined) delete copy.runId;
      else copy.runId = runId;
      this.append(runId, copy);
    }
  }

  /**
   * Records a call that is about to run (or was blocked). Returns the record,
   * whose `argsHash` the post-compaction guard needs. When detection is off
   * nothing is kept, but the record is still returned.
   */
  recordCall(call: ToolCallInput): ToolCallRecord {
    checkToolName("recordCall", call?.toolName);
    const record: MutableRecord = {
      toolName: call.toolName,
      argsHash: this.hashes.argsHashOf(call.toolName, call.params),
      timestamp: Date.now(),
    };
    if (call.toolCallId !== undefined) record.toolCallId = call.toolCallId;
    if (call.runId !== undefined) record.runId = call.runId;
    if (this.config.enabled) this.append(call.runId, record);
    return record;
  }

  /**
   * Records what a call returned or threw, hashing the result once (volatile
   * keys dropped). It completes the pending call of the same run with the same
   * `toolCallId` (or, without one, the newest pending call with the same tool
   * and arguments), else appends a new record. Returns the record, whose
   * `resultHash` the post-compaction guard needs; when detection is off
   * nothing is kept, but the hashes are still computed and returned.
   *
   * The runtime's own block result (`{ status: "blocked", reason: "tool-loop" }`)
   * is not an outcome: the call stays without one and the streak holds.
   */
  recordOutcome(outcome: ToolOutcomeInput): ToolCallRecord {
    checkToolName("recordOutcome", outcome?.toolName);
    const run = this.config.enabled ? this.runs.get(outcome.runId ?? NO_RUN) : undefined;
    const pending = run === undefined ? undefined : this.findPending(run.records, outcome);
    const record: MutableRecord = pending ?? {
      toolName: outcome.toolName,
      argsHash: this.hashes.argsHashOf(outcome.toolName, outcome.params),
      timestamp: Date.now(),
    };
    if (pending === undefined) {
      if (outcome.toolCallId !== undefined) record.toolCallId = outcome.toolCallId;
      if (outcome.runId !== undefined) record.runId = outcome.runId;
    }
    if (isLoopBlock(outcome.result) && outcome.error === undefined) {
      if (pending === undefined && this.config.enabled) this.append(outcome.runId, record);
      return record;
    }

    const failed = outcome.error !== undefined;
    record.outcome = failed ? "error" : "result";
    record.resultHash = this.hashes.intern(hashOutcome(outcome, { volatileKeys: this.volatileKeysFor(outcome.toolName) }));
    if (failed) {
      const unknownToolName = unknownToolNameOf(outcome.error);
      if (unknownToolName !== undefined) record.unknownToolName = unknownToolName;
    }
    if (pending === undefined && this.config.enabled) this.append(outcome.runId, record);
    return record;
  }

  /**
   * Checks the call about to run against its run's window. Detectors in
   * order: `unknown_tool_repeat`, `global_circuit_breaker`,
   * `known_poll_no_progress`, `ping_pong`, `generic_repeat`,
   * `argument_churn`, `repeated_error`; the first critical verdict wins, else
   * the first warning. Always `{ stuck: false }` when detection is off.
   */
  detect(toolName: string, params: unknown, options: DetectOptions = {}): LoopDetectionResult {
    checkToolName("detect", toolName);
    if (!this.config.enabled) return NOT_STUCK;
    const run = this.runs.get(options.runId ?? NO_RUN);
    if (run === undefined || run.records.length === 0) return NOT_STUCK;
    const records =
      options.toolCallId === undefined
        ? run.records
        : run.records.filter((record) => record.toolCallId !== options.toolCallId);
    const argsHash = this.hashes.argsHashOf(toolName, params);
    const poll = options.poll === true || this.pollTools.has(toolName);

    return this.firstVerdict(records, toolName, argsHash, poll);
  }

  /**
   * Counts of one run (`runId` given) or of all runs together.
   *
   * @example
   * ```ts
   * detector.stats({ runId }).mostFrequent?.count; // 12
   * ```
   */
  stats(options: { runId?: string } = {}): LoopDetectorStats {
    const runs =
      "runId" in options ? [this.runs.get(options.runId ?? NO_RUN)].filter((run) => run !== undefined) : [...this.runs.values()];
    const counts = new Map<string, { toolName: string; argsHash: string; count: number }>();
    let totalCalls = 0;
    for (const run of runs) {
      totalCalls += run.totalCalls;
      for (const record of run.records) {
        const entry = counts.get(record.argsHash);
        if (entry === undefined) counts.set(record.argsHash, { toolName: record.toolName, argsHash: record.argsHash, count: 1 });
        else entry.count++;
      }
    }
    let mostFrequent: LoopDetectorStats["mostFrequent"];
    for (const entry of counts.values()) if (mostFrequent === undefined || entry.count > mostFrequent.count) mostFrequent = entry;
    return mostFrequent === undefined
      ? { totalCalls, uniquePatterns: 0 }
      : { totalCalls, uniquePatterns: counts.size, mostFrequent: { ...mostFrequent } };
  }

  /** Forgets one run's window and counts; call it when the run ends. */
  endRun(runId?: string): void {
    this.runs.delete(runId ?? NO_RUN);
  }

  /** Forgets every run. */
  clear(): void {
    this.runs.clear();
  }

  /**
   * Runs the detectors in order and returns the first critical verdict, else
   * the first warning. Straight-line on purpose: it runs before every tool
   * call, and the measurements are shared between detectors.
   */
  private firstVerdict(
    records: readonly ToolCallRecord[],
    toolName: string,
    argsHash: string,
    poll: boolean,
  ): LoopDetectionResult {
    const { config } = this;
    const { detectors } = config;
    let warning: LoopDetection | undefined;

    const measures = measureWindow(records, toolName, argsHash);
    const unknownCount = measures.unknownToolCount;
    if (unknownCount >= config.unknownToolThreshold) {
      const name = measures.unknownToolName ?? toolName;
      return verdict("critical", "unknown_tool_repeat", toolName, unknownCount, messages.unknownToolMessage(name, unknownCount), `unknown_tool_repeat:${toolName}:${name}`);
    }

    const noProgress = measures.noProgressCount;
    const outcomeKey = `${argsHash}:${measures.noProgressResultHash ?? "none"}`;
    if (noProgress >= config.globalCircuitBreakerThreshold) {
      return verdict("critical", "global_circuit_breaker", toolName, noProgress, messages.circuitBreakerMessage(toolName, noProgress), `global_circuit_breaker:${outcomeKey}`);
    }

    if (poll && detectors.knownPollNoProgress) {
      const level = levelOf(noProgress, config);
      if (level !== undefined) {
        const found = verdict(level, "known_poll_no_progress", toolName, noProgress, messages.pollMessage(level, toolName, noProgress), `known_poll_no_progress:${outcomeKey}`);
        if (level === "critical") return found;
        warning = found;
      }
    }

    if (detectors.pingPong) {
      const streak = pingPongStreak(records, argsHash);
      if (streak.count >= config.warningThreshold && streak.pairedToolName !== undefined) {
        const level: LoopLevel = streak.count >= config.criticalThreshold && streak.stableOutcomes ? "critical" : "warning";
        const pair = [argsHash, streak.pairedArgsHash].sort().join("|");
        const found = verdict(level, "ping_pong", toolName, streak.count, messages.pingPongMessage(level, toolName, streak.pairedToolName, streak.count), `ping_pong:${pair}`, streak.pairedToolName);
        if (level === "critical") return found;
        warning ??= found;
      }
    }

    if (!poll && detectors.genericRepeat) {
      if (noProgress >= config.criticalThreshold) {
        return verdict("critical", "generic_repeat", toolName, noProgress, messages.genericRepeatMessage("critical", toolName, noProgress), `generic_repeat:${outcomeKey}`);
      }
      // Only repeats without progress warn: identical arguments whose results keep changing
      // (re-reading a file that is being appended to) are work, not a loop.
      const count = warning === undefined ? noProgress : 0;
      if (count >= config.warningThreshold) {
        warning = verdict("warning", "generic_repeat", toolName, count, messages.genericRepeatMessage("warning", toolName, count), `generic_repeat:${argsHash}`);
      }
    }

    if (detectors.argumentChurn && records.length >= config.globalCircuitBreakerThreshold) {
      const streak = churnStreak(records, argsHash);
      if (streak.count >= config.globalCircuitBreakerThreshold) {
        return verdict("critical", "argument_churn", toolName, streak.count, messages.argumentChurnMessage(toolName, streak.patterns, streak.count), `argument_churn:${toolName}`);
      }
    }

    if (detectors.repeatedError) {
      const count = measures.repeatedErrorCount;
      if (count >= config.criticalThreshold) {
        return verdict("critical", "repeated_error", toolName, count, messages.repeatedErrorMessage(toolName, count), `repeated_error:${toolName}`);
      }
    }

    return warning ?? NOT_STUCK;
  }

  private append(runId: string | undefined, record: MutableRecord): void {
    const key = runId ?? NO_RUN;
    let run = this.runs.get(key);
    if (run === undefined) {
      run = { records: [], totalCalls: 0 };
      if (this.runs.size >= MAX_TRACKED_RUNS) this.runs.delete(this.runs.keys().next().value as string);
      this.runs.set(key, run);
    } else if (key !== this.lastRunKey) {
      // Re-inserted so the Map's order is least recently used first.
      this.runs.delete(key);
      this.runs.set(key, run);
    }
    this.lastRunKey = key;
    run.records.push(record);
    run.totalCalls++;
    while (run.records.length > this.config.historySize) run.records.shift();
  }

  private findPending(records: MutableRecord[], outcome: ToolOutcomeInput): MutableRecord | undefined {
    if (outcome.toolCallId !== undefined) {
      for (let i = records.length - 1; i >= 0; i--) {
        const record = records[i];
        if (record.toolCallId === outcome.toolCallId && record.outcome === undefined) return record;
      }
      return undefined;
    }
    const argsHash = this.hashes.argsHashOf(outcome.toolName, outcome.params);
    for (let i = records.length - 1; i >= 0; i--) {
      const record = records[i];
      if (record.argsHash === argsHash && record.outcome === undefined && record.toolCallId === undefined) return record;
    }
    return undefined;
  }

  private volatileKeysFor(toolName: string): ReadonlySet<string> {
    return this.volatileKeysByTool.get(toolName) ?? this.defaultVolatileKeys;
  }
}

function verdict(
  level: LoopLevel,
  detector: LoopDetectorKind,
  toolName: string,
  count: number,
  message: string,
  warningKey: string,
  pairedToolName?: string,
): LoopDetection {
  return pairedToolName === undefined
    ? { stuck: true, level, detector, count, toolName, message, warningKey }
    : { stuck: true, level, detector, count, toolName, pairedToolName, message, warningKey };
}

function levelOf(count: number, config: LoopDetectionConfig): LoopLevel | undefined {
  if (count >= config.criticalThreshold) return "critical";
  if (count >= config.warningThreshold) return "warning";
  return undefined;
}

/**
 * A call without a tool name can match nothing, so a detector that took it
 * would answer "not stuck" for ever: a usage error, whatever the params
 * (params may be any value, cyclic ones included: a cycle hashes as
 * `"[Circular]"`). Any string is a name (a model may send an empty one; the
 * runtime reports that as an unknown tool).
 */
function checkToolName(method: string, toolName: unknown): void {
  if (typeof toolName === "string") return;
  const shown = toolName === null ? "null" : typeof toolName === "object" || typeof toolName === "function" ? `a ${typeof toolName}` : String(toolName);
  throw new TypeError(
    `ToolLoopDetector.${method}: toolName must be the name of the tool called (a string), got ${shown}` +
      (method === "detect" ? " — call detect(toolName, params, { runId })" : " — pass { toolName, params, runId }"),
  );
}
