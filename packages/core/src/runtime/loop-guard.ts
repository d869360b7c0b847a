import {
  PostCompactionGuard,
  ToolLoopDetector,
  ToolLoopError,
  resolveLoopDetectionConfig,
  type LoopDetection,
  type LoopDetectionConfig,
  type LoopDetectionOptions,
  type ToolCallRecord,
} from "@rein/guard";
import type { TextBlock, ToolResultBlock, ToolUseBlock } from "../model/content";
import type { Execution } from "./execution";
import type { RunEvents } from "./run-events";
import type { Span } from "@opentelemetry/api";
import { addSpanEvent, SPAN_EVENT } from "../telemetry/tracing";

let runCounter = 0;

/**
 * Tool-loop detection and the post-compaction guard for one model-tool
 * loop, with that loop's own agent's settings: a nested agent's thresholds,
 * poll tools, volatile keys and tool overrides apply to its own loop and to
 * no other. Blocks are counted over the whole execution, so a model cannot
 * escape the limit by nesting.
 */
export class LoopGuard {
  private readonly runId = `loop-${++runCounter}`;
  private readonly detector: ToolLoopDetector | undefined;
  private readonly compaction: PostCompactionGuard;
  private readonly notices: TextBlock[] = [];
  /** Highest count bucket (count / 10) already reported per warning key. */
  private readonly reported = new Map<string, number>();

  readonly config: LoopDetectionConfig;
  /** Blocks in the run before this loop started: its `maxBlockedCalls` counts its own and its nested loops' blocks. */
  private readonly blockedBefore: number;

  constructor(
    private readonly execution: Execution,
    private readonly events: RunEvents,
    settings: ResolvedLoopDetection,
  ) {
    this.config = settings.config;
    this.blockedBefore = execution.blockedCalls;
    this.detector = settings.detector();
    this.compaction = new PostCompactionGuard(settings.config.postCompactionGuard, { enabled: settings.userEnabled });
  }

  /**
   * Resolves the runtime's global settings with the agent's overrides, field
   * by field. Detection is ON unless one of them says `enabled: false`.
   */
  static resolve(global: LoopDetectionOptions | undefined, perAgent: LoopDetectionOptions | undefined): ResolvedLoopDetection {
    const userEnabled = perAgent?.enabled ?? global?.enabled;
    // On unless said otherwise: the Runtime's default, unlike the standalone detector's.
    const base = userEnabled === undefined ? { ...global, enabled: true } : global;
    const config = resolveLoopDetectionConfig(base, perAgent);
    return {
      config,
      userEnabled,
      // A detector per loop (a server may run thousands of one agent's loops at once); building one from a
      // resolved config skips the checks, so it costs a few small allocations.
      detector: () => (config.enabled ? new ToolLoopDetector(config) : undefined),
    };
  }


  /**
   * Checks a call before it runs. A warning is logged, emitted and queued
   * for the model's next user turn; a critical verdict returns the blocked
   * result to send instead of running the tool (after `maxBlockedCalls`
   * blocks the run ends with {@link ToolLoopError}).
   */
  before(call: ToolUseBlock, poll: boolean, span?: Span): ToolResultBlock | undefined {
    const detector = this.detector;
    if (detector === undefined) return undefined;
    let verdict: ReturnType<ToolLoopDetector["detect"]>;
    try {
      verdict = detector.detect(call.name, call.input, { runId: this.runId, poll });
      detector.recordCall({ toolName: call.name, params: call.input, toolCallId: call.id, runId: this.runId });
    } catch (error) {
      // Arguments that cannot be hashed (nested too deep) are not comparable: the call is treated as new.
      this.events.logger.warn({ err: error, tool: call.name }, "tool-loop detection skipped an unhashable call");
      return undefined;
    }
    if (!verdict.stuck) return undefined;
    if (verdict.level === "warning") {
      this.warn(verdict, call, span);
      return undefined;
    }
    const execution = this.execution;
    execution.blockedCalls++;
    this.events.logger.warn({ tool: call.name, detector: verdict.detector, count: verdict.count }, verdict.message);
    this.events.emit({
      type: "loop-block",
      toolCallId: call.id,
      name: call.name,
      detector: verdict.detector,
      count: verdict.count,
      message: verdict.message,
    });
    addSpanEvent(span, SPAN_EVENT.loopBlock, () => loopAttributes(verdict));
    if (execution.blockedCalls - this.blockedBefore >= this.config.maxBlockedCalls) {
      throw execution.abort(
        new ToolLoopError(verdict.detector, verdict.count, call.name, { blockedCalls: execution.blockedCalls }),
      );
    }
    return {
      type: "tool_result",
      toolUseId: call.id,
      content: JSON.stringify({ status: "blocked", reason: "tool-loop", message: verdict.message }),
      isError: true,
    };
  }

  /** Records what a call returned or threw, and feeds the post-compaction guard. */
  after(call: ToolUseBlock, outcome: { result?: unknown; error?: unknown }): void {
    // With detection off, outcomes are only hashed while the post-compaction window is open.
    if (this.detector === undefined && !this.compaction.armed) return;
    let record: ReturnType<ToolLoopDetector["recordOutcome"]>;
    try {
      record = (this.detector ?? scratch()).recordOutcome({
        toolName: call.name,
        params: call.input,
        toolCallId: call.id,
        runId: this.runId,
        ...outcome,
      });
    } catch {
      return; // unhashable (see before): nothing to compare
    }
    const seen = this.compaction.observe({ toolName: call.name, argsHash: record.argsHash, resultHash: record.resultHash });
    if (seen.shouldAbort && seen.error !== undefined) throw this.execution.abort(seen.error);
  }

  /**
   * What a paused turn keeps of this loop's guard (plain JSON): the
   * detection window, and the calls blocked so far, so that neither the
   * detectors nor the circuit breaker start again when the turn resumes.
   */
  carried(): LoopCarry {
    return {
      loopHistory: this.detector === undefined ? [] : [...this.detector.historyFor(this.runId)],
      blockedCalls: this.execution.blockedCalls - this.blockedBefore,
      loopNotices: this.notices.map((notice) => notice.text),
      loopReported: [...this.reported],
    };
  }

  /** Goes on from a paused turn's guard (see {@link carried}); a continuation from before `blockedCalls` was kept counts none. */
  restore(carry: Partial<LoopCarry> | undefined): void {
    if (carry?.loopHistory !== undefined) this.detector?.restoreHistory(this.runId, carry.loopHistory);
    const blocked = carry?.blockedCalls;
    if (typeof blocked === "number" && Number.isInteger(blocked) && blocked > 0) this.execution.blockedCalls += blocked;
    // Warnings queued when the turn paused reach the model on resume, and are not reported again.
    const list = (value: unknown): readonly unknown[] => (Array.isArray(value) ? value : []);
    for (const text of list(carry?.loopNotices)) if (typeof text === "string") this.notices.push({ type: "text", text });
    for (const entry of list(carry?.loopReported)) {
      if (Array.isArray(entry) && typeof entry[0] === "string" && typeof entry[1] === "number") this.reported.set(entry[0], entry[1]);
    }
  }

  /** Opens the post-compaction window (after a compaction retry). */
  armAfterCompaction(): void {
    this.compaction.arm();
  }

  /** Warnings to show at the start of the model's next user turn (then forgotten). */
  takeNotices(): TextBlock[] {
    return this.notices.splice(0);
  }

  private warn(verdict: LoopDetection, call: ToolUseBlock, span: Span | undefined): void {
    // Coalesce: one report per warning key and multiple of 10 calls.
    const bucket = Math.floor(verdict.count / 10);
    const last = this.reported.get(verdict.warningKey);
    if (last !== undefined && last >= bucket) return;
    this.reported.set(verdict.warningKey, bucket);
    this.events.logger.warn({ tool: call.name, detector: verdict.detector, count: verdict.count }, verdict.message);
    this.events.emit({
      type: "loop-warning",
      toolCallId: call.id,
      name: call.name,
      detector: verdict.detector,
      count: verdict.count,
      message: verdict.message,
    });
    this.notices.push({ type: "text", text: verdict.message });
    addSpanEvent(span, SPAN_EVENT.loopWarning, () => loopAttributes(verdict));
  }
}

/** What a paused turn keeps of its loop's guard (see {@link LoopGuard.carried}). */
export interface LoopCarry {
  /** The detection window when the turn paused. */
  readonly loopHistory: readonly ToolCallRecord[];
  /** Calls the loop had blocked: the circuit breaker (`maxBlockedCalls`) goes on counting from here. */
  readonly blockedCalls: number;
  /** Warnings queued for the model's next user turn: the resumed request carries them. */
  readonly loopNotices: readonly string[];
  /** The warnings already reported (key → count bucket), so a resume does not report them again. */
  readonly loopReported: readonly (readonly [string, number])[];
}

/** Loop-detection settings resolved for one agent's loop. */
export interface ResolvedLoopDetection {
  readonly config: LoopDetectionConfig;
  /** `enabled` exactly as the user gave it (the post-compaction guard follows it). */
  readonly userEnabled: boolean | undefined;
  /** Builds the detector of one loop (undefined when detection is off). */
  readonly detector: () => ToolLoopDetector | undefined;
}

let scratchDetector: ToolLoopDetector | undefined;
/** A detector with detection off: it keeps nothing but still hashes outcomes for the post-compaction guard. */
function scratch(): ToolLoopDetector {
  return (scratchDetector ??= new ToolLoopDetector({ enabled: false }));
}

/** A loop verdict as span event attributes. */
function loopAttributes(verdict: LoopDetection): Record<string, string | number> {
  return { "rein.loop.detector": verdict.detector, "rein.loop.count": verdict.count, "rein.loop.message": verdict.message };
}
