import type { LoopDetectionOptions } from "./loop-detection-options";
import type { LoopDetection, LoopDetectionResult } from "./loop-detection-result";
import { ToolLoopDetector } from "./loop-detector";
import { hashToolCall } from "./stable-hash";
import { UnknownToolError } from "./unknown-tool-error";

interface Step {
  toolName: string;
  params: unknown;
  result?: unknown;
  error?: unknown;
  runId?: string;
  poll?: boolean;
}

/** Runs one call the way the runtime does: detect, record the call, record its outcome. */
function step(detector: ToolLoopDetector, { toolName, params, result, error, runId, poll }: Step): LoopDetectionResult {
  const verdict = detector.detect(toolName, params, { runId, poll });
  detector.recordCall({ toolName, params, runId });
  detector.recordOutcome({ toolName, params, runId, result, error });
  return verdict;
}

/** Runs `count` calls built by `make(i)` and returns every verdict. */
function steps(detector: ToolLoopDetector, count: number, make: (i: number) => Step): LoopDetectionResult[] {
  return Array.from({ length: count }, (_, i) => step(detector, make(i)));
}

function stuck(verdict: LoopDetectionResult): LoopDetection {
  if (!verdict.stuck) throw new Error("expected a stuck verdict");
  return verdict;
}

const enabled = (options: LoopDetectionOptions = {}): ToolLoopDetector => new ToolLoopDetector({ enabled: true, ...options });
const same = (i: number): Step => ({ toolName: "search", params: { q: "rein" }, result: { hits: 0, page: i >= 0 ? 1 : 0 } });

describe("ToolLoopDetector: basics", () => {
  it("detects nothing and keeps nothing by default (detection off)", () => {
    const detector = new ToolLoopDetector();
    const verdicts = steps(detector, 40, same);
    expect(verdicts.every((verdict) => !verdict.stuck)).toBe(true);
    expect(detector.history).toHaveLength(0);
    expect(detector.detect("search", { q: "rein" })).toEqual({ stuck: false });
  });

  it("still returns hashes from recordCall and recordOutcome when off, for the post-compaction guard", () => {
    const detector = new ToolLoopDetector({ enabled: false });
    const call = detector.recordCall({ toolName: "search", params: { q: 1 } });
    const done = detector.recordOutcome({ toolName: "search", params: { q: 1 }, result: "x" });
    expect(call.argsHash).toMatch(/^search:[0-9a-f]{64}$/);
    expect(done.argsHash).toBe(call.argsHash);
    expect(done.resultHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("never flags 15 distinct calls", () => {
    const detector = enabled();
    const verdicts = steps(detector, 15, (i) => ({ toolName: "read", params: { path: `file-${i}.ts` }, result: `content ${i}` }));
    expect(verdicts.filter((verdict) => verdict.stuck)).toEqual([]);
  });

  it("ignores history recorded under another run id", () => {
    const detector = enabled();
    steps(detector, 25, (i) => ({ ...same(i), runId: "run-a" }));
    expect(stuck(detector.detect("search", { q: "rein" }, { runId: "run-a" })).level).toBe("critical");
    expect(detector.detect("search", { q: "rein" }, { runId: "run-b" })).toEqual({ stuck: false });
    expect(detector.detect("search", { q: "rein" })).toEqual({ stuck: false });
  });

  it("keeps only the newest historySize calls per run (window of 30)", () => {
    const detector = enabled();
    steps(detector, 45, (i) => ({ toolName: "read", params: { path: `f${i}` }, result: i }));
    const window = detector.historyFor();
    expect(window).toHaveLength(30);
    expect(window[0].argsHash).toBe(hashToolCall("read", { path: "f15" }));
    expect(window[29].argsHash).toBe(hashToolCall("read", { path: "f44" }));
    expect(detector.stats().totalCalls).toBe(45);
    // Calls pushed out of the window no longer count: 9 old repeats + 25 fillers + 1 repeat is not 10.
    const fresh = enabled();
    steps(fresh, 9, same);
    steps(fresh, 25, (i) => ({ toolName: "read", params: { path: `g${i}` }, result: i }));
    steps(fresh, 1, same);
    expect(fresh.detect("search", { q: "rein" })).toEqual({ stuck: false });
  });

  it("attaches an outcome to its pending call by id, else by arguments, else appends", () => {
    const detector = enabled();
    detector.recordCall({ toolName: "a", params: { x: 1 }, toolCallId: "c1" });
    detector.recordCall({ toolName: "a", params: { x: 1 }, toolCallId: "c2" });
    detector.recordOutcome({ toolName: "a", params: { x: 1 }, toolCallId: "c1", result: "first" });
    const [first, second] = detector.historyFor();
    expect(first.toolCallId).toBe("c1");
    expect(first.outcome).toBe("result");
    expect(second.outcome).toBeUndefined();

    detector.recordCall({ toolName: "b", params: { y: 1 } });
    detector.recordOutcome({ toolName: "b", params: { y: 1 }, result: "ok" });
    expect(detector.historyFor()).toHaveLength(3);
    detector.recordOutcome({ toolName: "c", params: {}, result: "orphan" });
    expect(detector.historyFor()).toHaveLength(4);
    expect(detector.historyFor()[3]).toMatchObject({ toolName: "c", outcome: "result" });
  });

  it("leaves the call being checked out when it was recorded before detect", () => {
    const detector = enabled();
    for (let i = 0; i < 10; i++) {
      detector.recordCall({ toolName: "search", params: { q: 1 }, toolCallId: `c${i}` });
      detector.recordOutcome({ toolName: "search", params: { q: 1 }, toolCallId: `c${i}`, result: "same" });
    }
    detector.recordCall({ toolName: "search", params: { q: 1 }, toolCallId: "c10" });
    expect(stuck(detector.detect("search", { q: 1 }, { toolCallId: "c10" })).count).toBe(10);
    // Without the id, the pending call is in the window, but a call with no outcome yet shows no lack of progress.
    expect(stuck(detector.detect("search", { q: 1 })).count).toBe(10);
  });

  it("reports total calls, unique patterns and the most frequent pattern", () => {
    const detector = enabled();
    steps(detector, 3, (i) => ({ toolName: "read", params: { path: "a" }, result: i }));
    steps(detector, 2, (i) => ({ toolName: "list", params: { dir: "." }, result: i, runId: "other" }));
    expect(detector.stats({ runId: undefined })).toMatchObject({ totalCalls: 3, uniquePatterns: 1, mostFrequent: { toolName: "read", count: 3 } });
    expect(detector.stats({ runId: "other" })).toMatchObject({ totalCalls: 2, uniquePatterns: 1, mostFrequent: { toolName: "list", count: 2 } });
    expect(detector.stats()).toMatchObject({ totalCalls: 5, uniquePatterns: 2, mostFrequent: { toolName: "read" } });
    detector.endRun("other");
    expect(detector.stats({ runId: "other" })).toEqual({ totalCalls: 0, uniquePatterns: 0 });
  });
});

describe("ToolLoopDetector: generic_repeat and the breaker", () => {
  it("warns generic_repeat after 10 identical calls with identical results, not after 9", () => {
    const detector = enabled();
    steps(detector, 9, () => ({ toolName: "search", params: { q: "rein" }, result: "page 1" }));
    expect(detector.detect("search", { q: "rein" })).toEqual({ stuck: false });
    step(detector, { toolName: "search", params: { q: "rein" }, result: "page 1" });
    const verdict = stuck(detector.detect("search", { q: "rein" }));
    expect(verdict).toMatchObject({ level: "warning", detector: "generic_repeat", count: 10, toolName: "search" });
    expect(verdict.message).toMatch(/^WARNING: /);
    expect(verdict.message).toContain("search");
    expect(verdict.message).toContain("10 times");
  });

  it("blocks after 20 identical calls with identical results, saying 'identical outcomes'", () => {
    const detector = enabled();
    const verdicts = steps(detector, 20, same);
    expect(verdicts.filter((verdict) => verdict.stuck && verdict.level === "critical")).toEqual([]);
    const verdict = stuck(detector.detect("search", { q: "rein" }));
    expect(verdict).toMatchObject({ level: "critical", detector: "generic_repeat", count: 20 });
    expect(verdict.message).toMatch(/^CRITICAL: /);
    expect(verdict.message).toContain("identical outcomes");
    expect(verdict.message).toContain("20 times");
  });

  it("never flags 30 identical calls whose output keeps changing (progress, e.g. re-reading a growing file)", () => {
    const detector = enabled();
    const verdicts = steps(detector, 30, (i) => ({ toolName: "exec", params: { cmd: "ls" }, result: { stdout: `run ${i}` } }));
    verdicts.push(detector.detect("exec", { cmd: "ls" }));
    expect(verdicts.filter((verdict) => verdict.stuck)).toEqual([]);
  });

  it("trips the global circuit breaker at 30 with every detector switched off", () => {
    const detector = enabled({
      detectors: { genericRepeat: false, knownPollNoProgress: false, pingPong: false, argumentChurn: false, repeatedError: false },
    });
    const verdicts = steps(detector, 30, same);
    expect(verdicts.some((verdict) => verdict.stuck)).toBe(false);
    const verdict = stuck(detector.detect("search", { q: "rein" }));
    expect(verdict).toMatchObject({ level: "critical", detector: "global_circuit_breaker", count: 30 });
    expect(verdict.message).toMatch(/^CRITICAL: search .*30 times/);
  });

  it("does not let volatile keys (pid, durationMs, cwd) defeat detection", () => {
    const detector = enabled();
    steps(detector, 20, (i) => ({
      toolName: "exec",
      params: { cmd: "make" },
      result: { exitCode: 2, stdout: "error: missing header", pid: 1000 + i, durationMs: 10 + i, cwd: `/tmp/w${i}` },
    }));
    expect(stuck(detector.detect("exec", { cmd: "make" }))).toMatchObject({ level: "critical", detector: "generic_repeat", count: 20 });
  });

  it("uses a tool's own volatile keys when overridden", () => {
    const detector = enabled({ toolOverrides: { fetch: { volatileKeys: ["etag"] } } });
    steps(detector, 20, (i) => ({ toolName: "fetch", params: { url: "u" }, result: { body: "same", etag: `e${i}` } }));
    expect(stuck(detector.detect("fetch", { url: "u" })).level).toBe("critical");
    // The override replaces the global list for that tool: pid counts again, so every result differs.
    const other = enabled({ toolOverrides: { fetch: { volatileKeys: ["etag"] } } });
    steps(other, 20, (i) => ({ toolName: "fetch", params: { url: "u" }, result: { body: "same", pid: i } }));
    expect(other.detect("fetch", { url: "u" })).toEqual({ stuck: false });
  });

  it("keeps the streak across blocked calls (recorded without an outcome)", () => {
    const detector = enabled();
    steps(detector, 20, same);
    for (let i = 0; i < 3; i++) {
      const verdict = stuck(detector.detect("search", { q: "rein" }));
      expect(verdict.level).toBe("critical");
      detector.recordCall({ toolName: "search", params: { q: "rein" } });
      // The runtime's own block result is not an outcome either.
      detector.recordOutcome({ toolName: "search", params: { q: "rein" }, result: { status: "blocked", reason: "tool-loop", message: "x" } });
    }
    expect(stuck(detector.detect("search", { q: "rein" })).level).toBe("critical");
  });

  it("lets a critical verdict win over an earlier detector's warning", () => {
    const detector = enabled();
    // 10 failures with varying arguments, then 10 with the arguments about to be checked: generic_repeat
    // (checked earlier) sees 10 identical calls, a warning; repeated_error sees 20 identical failures.
    steps(detector, 10, (i) => ({ toolName: "deploy", params: { n: i }, error: new Error("quota exceeded") }));
    steps(detector, 10, () => ({ toolName: "deploy", params: { n: 99 }, error: new Error("quota exceeded") }));
    const verdict = stuck(detector.detect("deploy", { n: 99 }));
    expect(verdict).toMatchObject({ level: "critical", detector: "repeated_error", count: 20 });
    const withoutRepeatedError = enabled({ detectors: { repeatedError: false } });
    steps(withoutRepeatedError, 10, (i) => ({ toolName: "deploy", params: { n: i }, error: new Error("quota exceeded") }));
    steps(withoutRepeatedError, 10, () => ({ toolName: "deploy", params: { n: 99 }, error: new Error("quota exceeded") }));
    expect(stuck(withoutRepeatedError.detect("deploy", { n: 99 }))).toMatchObject({ level: "warning", detector: "generic_repeat", count: 10 });
  });
});

describe("ToolLoopDetector: known_poll_no_progress", () => {
  const poll = (result: unknown): Step => ({ toolName: "job_status", params: { id: "j1" }, result });

  it("blocks 20 identical polls with identical results", () => {
    const detector = enabled({ pollTools: ["job_status"] });
    steps(detector, 10, () => poll({ state: "running" }));
    expect(stuck(detector.detect("job_status", { id: "j1" }))).toMatchObject({ level: "warning", detector: "known_poll_no_progress", count: 10 });
    steps(detector, 10, () => poll({ state: "running" }));
    const verdict = stuck(detector.detect("job_status", { id: "j1" }));
    expect(verdict).toMatchObject({ level: "critical", detector: "known_poll_no_progress", count: 20 });
    expect(verdict.message).toMatch(/^CRITICAL: .*job_status 20 times/);
  });

  it("never flags 25 polls whose output changes", () => {
    const detector = enabled({ pollTools: ["job_status"] });
    const verdicts = steps(detector, 25, (i) => poll({ state: "running", progress: i }));
    verdicts.push(detector.detect("job_status", { id: "j1" }));
    expect(verdicts.filter((verdict) => verdict.stuck)).toEqual([]);
  });

  it("honours custom thresholds 2/4 on a poll tool", () => {
    const detector = enabled({ pollTools: ["job_status"], warningThreshold: 2, criticalThreshold: 4 });
    const verdicts = steps(detector, 5, () => poll("pending"));
    expect(verdicts.map((verdict) => (verdict.stuck ? `${verdict.level}:${verdict.count}` : "ok"))).toEqual([
      "ok",
      "ok",
      "warning:2",
      "warning:3",
      "critical:4",
    ]);
    expect(verdicts.every((verdict) => !verdict.stuck || verdict.detector === "known_poll_no_progress")).toBe(true);
  });

  it("treats a tool that declares poll: true as a poll tool", () => {
    const detector = enabled();
    steps(detector, 20, () => ({ ...poll("pending"), poll: true }));
    expect(stuck(detector.detect("job_status", { id: "j1" }, { poll: true })).detector).toBe("known_poll_no_progress");
    expect(stuck(detector.detect("job_status", { id: "j1" })).detector).toBe("generic_repeat");
  });
});

describe("ToolLoopDetector: ping_pong", () => {
  const side = (i: number, stable: boolean): Step =>
    i % 2 === 0
      ? { toolName: "read", params: { path: "a.ts" }, result: stable ? "A" : `A${i}` }
      : { toolName: "write", params: { path: "a.ts" }, result: stable ? "ok" : `ok${i}` };

  it("warns at 10 alternating calls and blocks at 20 when both sides' outcomes stayed identical", () => {
    const detector = enabled();
    steps(detector, 9, (i) => side(i, true));
    expect(detector.detect("write", { path: "a.ts" })).toEqual({ stuck: false });
    steps(detector, 1, (i) => side(i + 9, true));
    const warning = stuck(detector.detect("read", { path: "a.ts" }));
    expect(warning).toMatchObject({ level: "warning", detector: "ping_pong", count: 10, toolName: "read", pairedToolName: "write" });
    expect(warning.message).toMatch(/^WARNING: .*read and write for 10 calls/);
    steps(detector, 10, (i) => side(i + 10, true));
    const critical = stuck(detector.detect("read", { path: "a.ts" }));
    expect(critical).toMatchObject({ level: "critical", detector: "ping_pong", count: 20, pairedToolName: "write" });
  });

  it("only warns at 20 alternating calls when outcomes change", () => {
    const detector = enabled();
    steps(detector, 20, (i) => side(i, false));
    expect(stuck(detector.detect("read", { path: "a.ts" }))).toMatchObject({ level: "warning", detector: "ping_pong", count: 20 });
  });

  it("does not flag read, list, read, write, list", () => {
    const detector = enabled({ warningThreshold: 2, criticalThreshold: 3, globalCircuitBreakerThreshold: 4 });
    const sequence: Step[] = [
      { toolName: "read", params: { path: "a" }, result: "A" },
      { toolName: "list", params: { dir: "." }, result: ["a"] },
      { toolName: "read", params: { path: "b" }, result: "B" },
      { toolName: "write", params: { path: "b" }, result: "ok" },
      { toolName: "list", params: { dir: "." }, result: ["a", "b"] },
    ];
    const verdicts = sequence.map((s) => step(detector, s));
    expect(verdicts.filter((verdict) => verdict.stuck)).toEqual([]);
  });
});

describe("ToolLoopDetector: unknown_tool_repeat", () => {
  it("does not flag 9 attempts at a missing tool and blocks the 10th", () => {
    const detector = enabled();
    const missing = (): Step => ({ toolName: "web_search", params: { q: "x" }, error: new UnknownToolError("web_search", ["search"]) });
    steps(detector, 9, missing);
    expect(detector.detect("web_search", { q: "x" })).toEqual({ stuck: false });
    steps(detector, 1, missing);
    const verdict = stuck(detector.detect("web_search", { q: "y" }));
    expect(verdict).toMatchObject({ level: "critical", detector: "unknown_tool_repeat", count: 10 });
    expect(verdict.message).toMatch(/^CRITICAL: the tool "web_search" does not exist .*10 times/);
  });

  it("counts error messages naming an unknown or not-found tool, and breaks on another tool", () => {
    const detector = enabled();
    steps(detector, 5, () => ({ toolName: "browse", params: {}, error: new Error("Unknown tool: browse") }));
    steps(detector, 5, () => ({ toolName: "browse", params: {}, error: "tool 'browse' not found" }));
    expect(stuck(detector.detect("browse", {})).detector).toBe("unknown_tool_repeat");

    const interrupted = enabled();
    steps(interrupted, 5, () => ({ toolName: "browse", params: {}, error: new Error("Unknown tool: browse") }));
    steps(interrupted, 1, () => ({ toolName: "search", params: {}, result: "ok" }));
    steps(interrupted, 5, () => ({ toolName: "browse", params: {}, error: new Error("Unknown tool: browse") }));
    // Only the 5 attempts since the other call count: no block, just the generic warning for 10 repeats.
    expect(stuck(interrupted.detect("browse", {}))).toMatchObject({ level: "warning", detector: "generic_repeat" });
  });
});

describe("ToolLoopDetector: beyond OpenClaw", () => {
  const cycle = ["q=rein", "q=rein framework", "q=rein ts"];

  it("blocks argument_churn: three argument patterns cycled 30 times without a new result", () => {
    const detector = enabled();
    const churn = (i: number): Step => ({ toolName: "search", params: { q: cycle[i % 3] }, result: "no results" });
    steps(detector, 29, churn);
    expect(detector.detect("search", { q: cycle[29 % 3] })).toEqual({ stuck: false });
    steps(detector, 1, (i) => churn(i + 29));
    const verdict = stuck(detector.detect("search", { q: cycle[0] }));
    expect(verdict).toMatchObject({ level: "critical", detector: "argument_churn", count: 30 });
    expect(verdict.message).toMatch(/^CRITICAL: .*search and 2 other call patterns .*30 calls/);
  });

  it("does not flag a churn whose results change, or one with a fourth pattern", () => {
    const changing = enabled({ detectors: { genericRepeat: false } });
    steps(changing, 30, (i) => ({ toolName: "search", params: { q: cycle[i % 3] }, result: `page ${i}` }));
    expect(changing.detect("search", { q: cycle[0] })).toEqual({ stuck: false });

    const four = enabled({ detectors: { genericRepeat: false } });
    steps(four, 30, (i) => ({ toolName: "search", params: { q: `${i % 4}` }, result: "none" }));
    expect(four.detect("search", { q: "2" })).toEqual({ stuck: false });
  });

  it("blocks repeated_error: one tool failing with the same error 20 times, arguments varying", () => {
    const detector = enabled();
    const fail = (i: number): Step => ({ toolName: "deploy", params: { attempt: i }, error: new Error("permission denied") });
    steps(detector, 19, fail);
    expect(detector.detect("deploy", { attempt: 19 })).toEqual({ stuck: false });
    steps(detector, 1, (i) => fail(i + 19));
    const verdict = stuck(detector.detect("deploy", { attempt: 20 }));
    expect(verdict).toMatchObject({ level: "critical", detector: "repeated_error", count: 20, toolName: "deploy" });
    expect(verdict.message).toMatch(/^CRITICAL: deploy has failed with the same error 20 times/);
  });

  it("does not count repeated_error across different errors or a success", () => {
    const detector = enabled();
    steps(detector, 10, (i) => ({ toolName: "deploy", params: { attempt: i }, error: new Error("permission denied") }));
    steps(detector, 1, () => ({ toolName: "deploy", params: { attempt: "x" }, result: "deployed" }));
    steps(detector, 10, (i) => ({ toolName: "deploy", params: { attempt: i }, error: new Error("permission denied") }));
    steps(detector, 5, (i) => ({ toolName: "deploy", params: { attempt: i }, error: new Error(`timeout ${i}`) }));
    expect(detector.detect("deploy", { attempt: 99 })).toEqual({ stuck: false });
  });
});

describe("ToolLoopDetector: arguments are compared by content, never by object identity", () => {
  it("tells apart the pages of a caller that mutates one params object (paging 1 → 6)", () => {
    const detector = enabled({ warningThreshold: 2, criticalThreshold: 4 });
    const params = { cursor: "", page: 0 };
    const verdicts: LoopDetectionResult[] = [];
    for (let page = 1; page <= 6; page++) {
      params.page = page;
      params.cursor = `after-${page - 1}`;
      // Every page answers the same acknowledgement: only the arguments show progress.
      verdicts.push(step(detector, { toolName: "mark_read", params, result: { status: "ok" } }));
    }
    expect(verdicts).toEqual(Array(6).fill({ stuck: false }));
    const hashes = detector.historyFor().map((record) => record.argsHash);
    expect(new Set(hashes).size).toBe(6);
    expect(hashes[5]).toBe(hashToolCall("mark_read", { cursor: "after-5", page: 6 }));
  });

  it("tells apart pages kept in a nested object, an added key, and a changed prototype of one params object", () => {
    const detector = enabled({ warningThreshold: 2, criticalThreshold: 4 });
    const params: Record<string, unknown> = { query: { page: 0 } };
    const seen = new Set<string>();
    for (let page = 1; page <= 6; page++) {
      (params["query"] as { page: number }).page = page;
      expect(step(detector, { toolName: "list", params, result: "ok" })).toEqual({ stuck: false });
      seen.add(detector.recordCall({ toolName: "list", params }).argsHash);
    }
    expect(seen.size).toBe(6);
    const flat: Record<string, unknown> = { q: "a" };
    const first = detector.recordCall({ toolName: "find", params: flat }).argsHash;
    flat["page"] = 2;
    const second = detector.recordCall({ toolName: "find", params: flat }).argsHash;
    Object.setPrototypeOf(flat, { toJSON: () => "replaced" });
    const third = detector.recordCall({ toolName: "find", params: flat }).argsHash;
    expect(new Set([first, second, third]).size).toBe(3);
    expect(third).toBe(hashToolCall("find", "replaced"));
  });

  it("sees a params object mutated between detect, recordCall and recordOutcome as the call it now describes", () => {
    const detector = enabled();
    const params: Record<string, unknown> = { q: "a" };
    expect(detector.recordCall({ toolName: "search", params }).argsHash).toBe(hashToolCall("search", { q: "a" }));
    params["q"] = "b";
    expect(detector.recordOutcome({ toolName: "search", params, result: 1 }).argsHash).toBe(hashToolCall("search", { q: "b" }));
    params["q"] = "a";
    expect(detector.recordOutcome({ toolName: "search", params, result: 2 }).argsHash).toBe(hashToolCall("search", { q: "a" }));
    // The pending call recorded for { q: "a" } got the second outcome; { q: "b" } was appended on its own.
    expect(detector.historyFor().map((record) => record.outcome)).toEqual(["result", "result"]);
  });
});

describe("ToolLoopDetector: a call without a tool name is a usage error", () => {
  const cyclic: Record<string, unknown> = { query: "x" };
  cyclic["self"] = cyclic;

  it("detect(undefined, <cyclic params>) is a TypeError saying what to pass, before and after calls were recorded", () => {
    const detector = new ToolLoopDetector({ enabled: true });
    expect(() => detector.detect(undefined as unknown as string, cyclic)).toThrow(
      "ToolLoopDetector.detect: toolName must be the name of the tool called (a string), got undefined — call detect(toolName, params, { runId })",
    );
    for (let index = 0; index < 3; index++) detector.recordOutcome({ toolName: "search", params: cyclic, result: "same" });
    for (const toolName of [undefined, null, 42, {}, Symbol("search")]) expect(() => detector.detect(toolName as unknown as string, cyclic)).toThrow(TypeError);
    // Detection off does not hide the mistake.
    expect(() => new ToolLoopDetector().detect(undefined as unknown as string, cyclic)).toThrow(TypeError);
  });

  it("recordCall and recordOutcome refuse it too, and keep nothing", () => {
    const detector = new ToolLoopDetector({ enabled: true });
    expect(() => detector.recordCall({ toolName: undefined as unknown as string, params: cyclic })).toThrow(/ToolLoopDetector\.recordCall: toolName must be .* got undefined — pass \{ toolName, params, runId \}/);
    expect(() => detector.recordOutcome({ toolName: null as unknown as string, params: cyclic, result: 1 })).toThrow(/ToolLoopDetector\.recordOutcome: toolName must be .* got null/);
    expect(detector.history).toEqual([]);
  });

  it("cyclic params are accepted: a cycle hashes as \"[Circular]\", so repeats of the same cyclic call are still caught", () => {
    const detector = new ToolLoopDetector({ enabled: true, warningThreshold: 3 });
    for (let index = 0; index < 3; index++) detector.recordOutcome({ toolName: "search", params: cyclic, result: "same" });
    expect(detector.detect("search", cyclic)).toMatchObject({ stuck: true, level: "warning", toolName: "search" });
  });
});
