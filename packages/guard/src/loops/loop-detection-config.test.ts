import { DEFAULT_LOOP_DETECTION_CONFIG, resolveLoopDetectionConfig } from "./loop-detection-config";

describe("resolveLoopDetectionConfig", () => {
  it("returns the DESIGN 2.5 defaults with detection off", () => {
    const config = resolveLoopDetectionConfig();
    expect(config).toMatchObject({
      enabled: false,
      historySize: 30,
      warningThreshold: 10,
      criticalThreshold: 20,
      unknownToolThreshold: 10,
      globalCircuitBreakerThreshold: 30,
      maxBlockedCalls: 3,
      detectors: { genericRepeat: true, knownPollNoProgress: true, pingPong: true, argumentChurn: true, repeatedError: true },
      postCompactionGuard: { windowSize: 3, enabled: true },
      pollTools: [],
    });
    expect(config.volatileKeys).toEqual(expect.arrayContaining(["durationMs", "pid", "cwd", "messageId", "timestamp", "ts"]));
  });

  it("overlays per-agent fields on global ones one by one, nested blocks too", () => {
    const config = resolveLoopDetectionConfig(
      { enabled: true, warningThreshold: 5, criticalThreshold: 8, detectors: { pingPong: false }, postCompactionGuard: { windowSize: 4 } },
      { criticalThreshold: 9, detectors: { genericRepeat: false } },
    );
    expect(config.enabled).toBe(true);
    expect(config.warningThreshold).toBe(5);
    expect(config.criticalThreshold).toBe(9);
    expect(config.detectors).toEqual({
      genericRepeat: false,
      knownPollNoProgress: true,
      pingPong: false,
      argumentChurn: true,
      repeatedError: true,
    });
    expect(config.postCompactionGuard).toEqual({ windowSize: 4, enabled: true });
  });

  it("lets an agent switch one detector off without clearing its siblings", () => {
    const config = resolveLoopDetectionConfig({ detectors: { genericRepeat: true } }, { detectors: { pingPong: false } });
    expect(config.detectors.pingPong).toBe(false);
    expect(config.detectors.genericRepeat).toBe(true);
    expect(config.detectors.knownPollNoProgress).toBe(true);
  });

  it("falls back past non-integer and non-positive numbers", () => {
    const config = resolveLoopDetectionConfig(
      { warningThreshold: 4, historySize: 0 },
      { warningThreshold: 2.5, criticalThreshold: -1, historySize: Number.NaN, unknownToolThreshold: 0, postCompactionGuard: { windowSize: 1.5 } },
    );
    expect(config.warningThreshold).toBe(4);
    expect(config.criticalThreshold).toBe(20);
    expect(config.historySize).toBe(30);
    expect(config.unknownToolThreshold).toBe(10);
    expect(config.postCompactionGuard.windowSize).toBe(3);
  });

  it("raises critical to warning+1 and the breaker to critical+1 when out of order", () => {
    const config = resolveLoopDetectionConfig({ warningThreshold: 25, criticalThreshold: 12, globalCircuitBreakerThreshold: 26 });
    expect(config.criticalThreshold).toBe(26);
    expect(config.globalCircuitBreakerThreshold).toBe(27);
    const equal = resolveLoopDetectionConfig({ warningThreshold: 7, criticalThreshold: 7, globalCircuitBreakerThreshold: 7 });
    expect([equal.warningThreshold, equal.criticalThreshold, equal.globalCircuitBreakerThreshold]).toEqual([7, 8, 9]);
  });

  it("keeps the post-compaction guard on unless enabled is explicitly false", () => {
    expect(resolveLoopDetectionConfig().postCompactionGuard.enabled).toBe(true);
    expect(resolveLoopDetectionConfig({ enabled: true }).postCompactionGuard.enabled).toBe(true);
    expect(resolveLoopDetectionConfig({ enabled: false }).postCompactionGuard.enabled).toBe(false);
    expect(resolveLoopDetectionConfig({ enabled: false }, { enabled: true }).postCompactionGuard.enabled).toBe(true);
    expect(resolveLoopDetectionConfig({ enabled: false, postCompactionGuard: { enabled: true } }).postCompactionGuard.enabled).toBe(true);
  });

  it("replaces lists and merges tool overrides by tool name", () => {
    const config = resolveLoopDetectionConfig(
      { pollTools: ["job_status"], volatileKeys: ["a"], toolOverrides: { exec: { volatileKeys: ["pid"] }, send: { volatileKeys: ["id"] } } },
      { pollTools: ["process_poll"], toolOverrides: { exec: { volatileKeys: ["pid", "cwd"] } } },
    );
    expect(config.pollTools).toEqual(["process_poll"]);
    expect(config.volatileKeys).toEqual(["a"]);
    expect(config.toolOverrides).toEqual({ exec: { volatileKeys: ["pid", "cwd"] }, send: { volatileKeys: ["id"] } });
  });

  it("is idempotent on a resolved config and never shares the default lists", () => {
    const resolved = resolveLoopDetectionConfig({ enabled: true, warningThreshold: 3 });
    expect(resolveLoopDetectionConfig(resolved)).toEqual(resolved);
    expect(resolved.volatileKeys).not.toBe(DEFAULT_LOOP_DETECTION_CONFIG.volatileKeys);
    expect(Object.isFrozen(DEFAULT_LOOP_DETECTION_CONFIG.detectors)).toBe(true);
  });
});
