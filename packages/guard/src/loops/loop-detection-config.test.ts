import { DEFAULT_LOOP_DETECTION_CONFIG, resolveLoopDetectionConfig } from "./loop-detection-config";
import type { LoopDetectionOptions } from "./loop-detection-options";
import { ToolLoopDetector } from "./loop-detector";

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

/** Asserts `run` throws a TypeError (the class, not only the message) with exactly `message`. */
function expectTypeError(run: () => unknown, message: string): void {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(TypeError);
  expect((caught as TypeError).message).toBe(message);
}

describe("resolveLoopDetectionConfig: validation", () => {
  it.each<[string, unknown, string]>([
    ["a typo at the top", { enable: true }, "Unsupported loopDetection option 'enable' (did you mean 'enabled'?)"],
    ["a typo in detectors", { detectors: { pingpong: false } }, "Unsupported loopDetection option 'detectors.pingpong' (did you mean 'detectors.pingPong'?)"],
    [
      "a cut-short key in postCompactionGuard",
      { postCompactionGuard: { window: 3 } },
      "Unsupported loopDetection option 'postCompactionGuard.window' (did you mean 'postCompactionGuard.windowSize'?)",
    ],
    [
      "a typo in a toolOverrides entry",
      { toolOverrides: { exec: { volatileKey: ["pid"] } } },
      "Unsupported loopDetection option 'toolOverrides.exec.volatileKey' (did you mean 'toolOverrides.exec.volatileKeys'?)",
    ],
    ["several unknown keys", { histroySize: 10, colour: "red" }, "Unsupported loopDetection options 'histroySize' (did you mean 'historySize'?), 'colour'"],
  ])("rejects %s with a TypeError naming the option path", (_case, options, message) => {
    expectTypeError(() => resolveLoopDetectionConfig(options as LoopDetectionOptions), message);
  });

  it.each<[string, unknown, string]>([
    ["enabled: \"true\"", { enabled: "true" }, `Invalid loopDetection option 'enabled': expected a boolean, got "true"`],
    ["historySize: \"10\"", { historySize: "10" }, `Invalid loopDetection option 'historySize': expected a number, got "10"`],
    ["maxBlockedCalls: 3n", { maxBlockedCalls: 3n }, "Invalid loopDetection option 'maxBlockedCalls': expected a number, got 3n"],
    ["pollTools: \"x\"", { pollTools: "x" }, `Invalid loopDetection option 'pollTools': expected an array of strings, got "x"`],
    ["volatileKeys with a number", { volatileKeys: ["pid", 3] }, "Invalid loopDetection option 'volatileKeys[1]': expected a string, got 3"],
    ["detectors: true", { detectors: true }, "Invalid loopDetection option 'detectors': expected an object, got true"],
    ["detectors.pingPong: 0", { detectors: { pingPong: 0 } }, "Invalid loopDetection option 'detectors.pingPong': expected a boolean, got 0"],
    [
      "postCompactionGuard.windowSize: \"3\"",
      { postCompactionGuard: { windowSize: "3" } },
      `Invalid loopDetection option 'postCompactionGuard.windowSize': expected a number, got "3"`,
    ],
    ["toolOverrides: []", { toolOverrides: [] }, "Invalid loopDetection option 'toolOverrides': expected an object, got []"],
    ["a toolOverrides entry that is a list", { toolOverrides: { exec: ["pid"] } }, `Invalid loopDetection option 'toolOverrides.exec': expected an object, got ["pid"]`],
    [
      "toolOverrides volatileKeys: a string",
      { toolOverrides: { "web.search": { volatileKeys: "pid" } } },
      `Invalid loopDetection option 'toolOverrides."web.search".volatileKeys': expected an array of strings, got "pid"`,
    ],
    ["null", null, "Invalid loopDetection options: expected an object, got null"],
    ["a string", "on", `Invalid loopDetection options: expected an object, got "on"`],
    ["a Map", new Map([["enabled", true]]), "Invalid loopDetection options: expected an object, got a Map"],
  ])("rejects %s with a TypeError naming the option and the expected type", (_case, options, message) => {
    expectTypeError(() => resolveLoopDetectionConfig(options as LoopDetectionOptions), message);
  });

  it("checks the per-agent layer like the global one", () => {
    expectTypeError(
      () => resolveLoopDetectionConfig({ enabled: true }, { enable: false } as LoopDetectionOptions),
      "Unsupported loopDetection option 'enable' (did you mean 'enabled'?)",
    );
    expectTypeError(
      () => resolveLoopDetectionConfig({ enabled: true }, { enabled: "false" } as unknown as LoopDetectionOptions),
      `Invalid loopDetection option 'enabled': expected a boolean, got "false"`,
    );
  });

  it("accepts undefined anywhere as not set, and every key of a resolved config", () => {
    const config = resolveLoopDetectionConfig({
      enabled: undefined,
      historySize: undefined,
      detectors: { pingPong: undefined },
      postCompactionGuard: undefined,
      toolOverrides: { exec: undefined, send: { volatileKeys: undefined } },
    } as unknown as LoopDetectionOptions);
    expect(config.enabled).toBe(false);
    expect(config.toolOverrides).toEqual({ send: {} });
    expect(resolveLoopDetectionConfig(DEFAULT_LOOP_DETECTION_CONFIG)).toEqual(resolveLoopDetectionConfig());
  });

  it("still lets numbers of the right type that are not positive integers fall back", () => {
    const config = resolveLoopDetectionConfig({ historySize: -3, warningThreshold: Number.NaN, maxBlockedCalls: Infinity });
    expect([config.historySize, config.warningThreshold, config.maxBlockedCalls]).toEqual([30, 10, 3]);
  });
});

describe("resolveLoopDetectionConfig: historySize never hides a detector", () => {
  it("raises historySize to the largest threshold the window must hold", () => {
    expect(resolveLoopDetectionConfig({ historySize: 5 }).historySize).toBe(30);
    expect(resolveLoopDetectionConfig({ historySize: 5, warningThreshold: 2, criticalThreshold: 3, globalCircuitBreakerThreshold: 4 }).historySize).toBe(10);
    expect(
      resolveLoopDetectionConfig({ historySize: 5, warningThreshold: 2, criticalThreshold: 3, globalCircuitBreakerThreshold: 4, unknownToolThreshold: 7 })
        .historySize,
    ).toBe(7);
    expect(resolveLoopDetectionConfig({ historySize: 50 }).historySize).toBe(50);
    // Out-of-order thresholds are put in order first: the raised breaker (26) sets the floor.
    expect(resolveLoopDetectionConfig({ historySize: 8, warningThreshold: 24, criticalThreshold: 3, globalCircuitBreakerThreshold: 3 }).historySize).toBe(26);
  });

  it("blocks 20 identical calls with a historySize of 5 (the window is raised to 30)", () => {
    const detector = new ToolLoopDetector({ enabled: true, historySize: 5 });
    for (let i = 0; i < 20; i++) {
      detector.recordCall({ toolName: "search", params: { q: "rein" } });
      detector.recordOutcome({ toolName: "search", params: { q: "rein" }, result: "same" });
    }
    expect(detector.detect("search", { q: "rein" })).toMatchObject({ stuck: true, level: "critical", detector: "generic_repeat" });
  });
});

describe("ToolLoopDetector options", () => {
  it("are checked like resolveLoopDetectionConfig's", () => {
    expectTypeError(
      () => new ToolLoopDetector({ enable: true } as LoopDetectionOptions),
      "Unsupported loopDetection option 'enable' (did you mean 'enabled'?)",
    );
    expectTypeError(
      () => new ToolLoopDetector({ enabled: "true" } as unknown as LoopDetectionOptions),
      `Invalid loopDetection option 'enabled': expected a boolean, got "true"`,
    );
    expectTypeError(() => new ToolLoopDetector(null as unknown as LoopDetectionOptions), "Invalid loopDetection options: expected an object, got null");
    expect(new ToolLoopDetector({ enabled: true, historySize: 3 }).config.historySize).toBe(30);
  });
});

describe("resolveLoopDetectionConfig: counts no run can reach are refused", () => {
  it("warningThreshold: 2 ** 53 (and any count above 10,000) is a TypeError naming the option, the bound and the way to turn detection off", () => {
    expect(() => resolveLoopDetectionConfig({ enabled: true, warningThreshold: 2 ** 53 })).toThrow(
      "Invalid loopDetection option 'warningThreshold': expected a number of calls, at most 10000 (to turn detection off, set enabled: false), got 9007199254740992",
    );
    for (const field of ["historySize", "warningThreshold", "criticalThreshold", "unknownToolThreshold", "globalCircuitBreakerThreshold", "maxBlockedCalls"] as const) {
      expect(() => resolveLoopDetectionConfig({ [field]: 10_001 })).toThrow(new RegExp(`'${field}': expected a number of calls, at most 10000`));
      expect(() => new ToolLoopDetector({ [field]: 1e300 })).toThrow(TypeError);
    }
    expect(() => resolveLoopDetectionConfig({}, { postCompactionGuard: { windowSize: 2 ** 53 } })).toThrow(/'postCompactionGuard\.windowSize': expected a number of calls, at most 10000/);
  });

  it("10,000 is accepted, and the thresholds above it stay ordered (critical > warning, breaker > critical)", () => {
    const config = resolveLoopDetectionConfig({ warningThreshold: 10_000 });
    expect([config.warningThreshold, config.criticalThreshold, config.globalCircuitBreakerThreshold]).toEqual([10_000, 10_001, 10_002]);
    expect(config.historySize).toBe(10_002);
  });
});
