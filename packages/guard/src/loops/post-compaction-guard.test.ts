import { GuardError, ReinError } from "../errors/rein-error";
import { PostCompactionGuard } from "./post-compaction-guard";
import { PostCompactionLoopPersistedError } from "./post-compaction-loop-persisted-error";
import { hashOutcome, hashToolCall } from "./stable-hash";

const call = (result: unknown, args: unknown = { path: "big.log" }) => ({
  toolName: "read",
  argsHash: hashToolCall("read", args),
  resultHash: hashOutcome({ result }),
});

describe("PostCompactionGuard", () => {
  it("is off until armed, and observing while disarmed changes nothing", () => {
    const guard = new PostCompactionGuard();
    expect(guard.armed).toBe(false);
    for (let i = 0; i < 5; i++) {
      expect(guard.observe(call("same"))).toEqual({ shouldAbort: false, armed: false, remainingAttempts: 0, count: 0 });
    }
  });

  it("arms a window of windowSize calls (default 3)", () => {
    const guard = new PostCompactionGuard();
    guard.arm();
    expect(guard.windowSize).toBe(3);
    expect(guard.armed).toBe(true);
    expect(guard.remainingAttempts).toBe(3);
    expect(guard.observe(call("a"))).toMatchObject({ shouldAbort: false, armed: true, remainingAttempts: 2, count: 1 });
  });

  it("aborts with PostCompactionLoopPersistedError when one triple fills the window", () => {
    const guard = new PostCompactionGuard({ windowSize: 3 });
    guard.arm();
    expect(guard.observe(call("same")).shouldAbort).toBe(false);
    expect(guard.observe(call("same")).shouldAbort).toBe(false);
    const verdict = guard.observe(call("same"));
    expect(verdict).toMatchObject({ shouldAbort: true, armed: false, remainingAttempts: 0, count: 3 });
    const error = verdict.error;
    expect(error).toBeInstanceOf(PostCompactionLoopPersistedError);
    expect(error).toMatchObject({ detector: "compaction_loop_persisted", count: 3, toolName: "read" });
    expect(error?.message).toMatch(/^CRITICAL: read was called 3 times .*compaction did not break the loop/);
    expect(guard.armed).toBe(false);
  });

  it("never aborts when results change", () => {
    const guard = new PostCompactionGuard({ windowSize: 3 });
    guard.arm();
    const verdicts = ["a", "b", "a"].map((result) => guard.observe(call(result)));
    expect(verdicts.some((verdict) => verdict.shouldAbort)).toBe(false);
  });

  it("never aborts when arguments change", () => {
    const guard = new PostCompactionGuard({ windowSize: 3 });
    guard.arm();
    const verdicts = [1, 2, 3].map((page) => guard.observe(call("same", { page })));
    expect(verdicts.some((verdict) => verdict.shouldAbort)).toBe(false);
  });

  it("never counts a call without a result hash as a repeat", () => {
    const guard = new PostCompactionGuard({ windowSize: 2 });
    guard.arm();
    const pending = { toolName: "read", argsHash: hashToolCall("read", {}) };
    expect(guard.observe(pending)).toMatchObject({ shouldAbort: false, count: 0, remainingAttempts: 1 });
    expect(guard.observe(pending)).toMatchObject({ shouldAbort: false, armed: false });
  });

  it("disarms after windowSize calls whatever the verdict, and the loop after it is not its business", () => {
    const guard = new PostCompactionGuard({ windowSize: 3 });
    guard.arm();
    guard.observe(call("a"));
    guard.observe(call("same"));
    const last = guard.observe(call("same"));
    expect(last).toMatchObject({ shouldAbort: false, armed: false, remainingAttempts: 0 });
    expect(guard.observe(call("same"))).toMatchObject({ shouldAbort: false, armed: false, count: 0 });
  });

  it("starts from an empty window when re-armed after another compaction", () => {
    const guard = new PostCompactionGuard({ windowSize: 3 });
    guard.arm();
    guard.observe(call("same"));
    guard.observe(call("same"));
    guard.arm();
    expect(guard.remainingAttempts).toBe(3);
    expect(guard.observe(call("same"))).toMatchObject({ shouldAbort: false, count: 1 });
    guard.observe(call("same"));
    expect(guard.observe(call("same")).shouldAbort).toBe(true);
  });

  it("is on unless loop detection is explicitly disabled", () => {
    const byDefault = new PostCompactionGuard({ windowSize: 2 });
    const whenUnset = new PostCompactionGuard({ windowSize: 2 }, { enabled: undefined });
    const whenOn = new PostCompactionGuard({ windowSize: 2 }, { enabled: true });
    const whenOff = new PostCompactionGuard({ windowSize: 2 }, { enabled: false });
    for (const guard of [byDefault, whenUnset, whenOn]) {
      guard.arm();
      guard.observe(call("same"));
      expect(guard.observe(call("same")).shouldAbort).toBe(true);
    }
    whenOff.arm();
    expect(whenOff.armed).toBe(false);
    expect(whenOff.observe(call("same")).shouldAbort).toBe(false);
    expect(whenOff.observe(call("same")).shouldAbort).toBe(false);
  });

  it("falls back to a window of 3 for invalid sizes and honours a resolved config's enabled", () => {
    expect(new PostCompactionGuard({ windowSize: 0 }).windowSize).toBe(3);
    expect(new PostCompactionGuard({ windowSize: 2.5 }).windowSize).toBe(3);
    expect(new PostCompactionGuard({ windowSize: 5 }).windowSize).toBe(5);
    expect(new PostCompactionGuard({ windowSize: 3, enabled: false }, { enabled: true }).enabled).toBe(false);
  });

  it("raises an error that is a ReinError but not a GuardError refusal", () => {
    const error = new PostCompactionLoopPersistedError("read", 3);
    expect(error.name).toBe("PostCompactionLoopPersistedError");
    expect(ReinError.isInstance(error)).toBe(true);
    expect(GuardError.isInstance(error)).toBe(false);
  });
});
