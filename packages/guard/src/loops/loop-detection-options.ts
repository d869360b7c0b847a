/**
 * Loop-detection settings as a user writes them ({@link LoopDetectionOptions}
 * and its nested blocks) and their schema, in one file: the resolver in
 * loop-detection-config.ts imports both, and nothing here imports back.
 *
 * The shape of {@link LoopDetectionOptions}, checked once per settings object
 * by `resolveLoopDetectionConfig` (internal to the loops folder). A typo or a
 * wrong type must never leave detection silently off, so unknown keys at any
 * level and values of the wrong type are a `TypeError` naming the option path
 * and what it expects:
 *
 * - `Unsupported loopDetection option 'enable' (did you mean 'enabled'?)`
 * - `Invalid loopDetection option 'enabled': expected a boolean, got "true"`
 * - `Invalid loopDetection option 'toolOverrides.exec.volatileKeys[1]': expected a string, got 3`
 *
 * Only types are checked here, and one bound: a count above
 * {@link MAX_LOOP_DETECTION_COUNT} is refused (`warningThreshold: 2 ** 53`
 * would turn the detector off without a word). A number that is not a
 * positive integer still falls back to the default (DESIGN 2.5).
 */

/**
 * Which detectors of {@link ToolLoopDetector} run. `unknown_tool_repeat` and
 * `global_circuit_breaker` have no switch: they stay on whenever loop
 * detection is enabled.
 */
export interface LoopDetectorSwitches {
  /** Same tool and arguments repeated (`generic_repeat`). @default true */
  genericRepeat: boolean;
  /** A poll tool returning the same thing for the same arguments (`known_poll_no_progress`). @default true */
  knownPollNoProgress: boolean;
  /** Alternation between two call patterns (`ping_pong`). @default true */
  pingPong: boolean;
  /** Two or three argument patterns cycled without any new result (`argument_churn`). @default true */
  argumentChurn: boolean;
  /** One tool failing with the same error again and again (`repeated_error`). @default true */
  repeatedError: boolean;
}

/** Settings of the {@link PostCompactionGuard}. */
export interface PostCompactionGuardConfig {
  /**
   * Tool calls the guard watches after a compaction retry, and the number of
   * identical (tool, arguments, result) triples that abort the run.
   * @default 3
   */
  windowSize: number;
  /**
   * Whether the guard runs. Unless set here it follows the loop-detection
   * master switch: on unless `enabled` is explicitly `false`.
   * @default true
   */
  enabled: boolean;
}

/** Per-tool settings in {@link LoopDetectionConfig.toolOverrides}. */
export interface LoopDetectionToolOverride {
  /**
   * Keys dropped from this tool's results before hashing, replacing the
   * global {@link LoopDetectionConfig.volatileKeys} for this tool. Spread
   * `DEFAULT_LOOP_DETECTION_CONFIG.volatileKeys` to extend instead of replace.
   */
  volatileKeys?: readonly string[];
}

/**
 * Loop-detection settings as written by a user: every field optional, nested
 * blocks partial. Omitted fields keep the value beneath them (per-agent over
 * global over {@link DEFAULT_LOOP_DETECTION_CONFIG}).
 *
 * @example
 * ```ts
 * const options: LoopDetectionOptions = { enabled: true, detectors: { pingPong: false } };
 * ```
 */
export interface LoopDetectionOptions {
  /** {@inheritDoc LoopDetectionConfig.enabled} */
  enabled?: boolean;
  /** {@inheritDoc LoopDetectionConfig.historySize} */
  historySize?: number;
  /** {@inheritDoc LoopDetectionConfig.warningThreshold} */
  warningThreshold?: number;
  /** {@inheritDoc LoopDetectionConfig.criticalThreshold} */
  criticalThreshold?: number;
  /** {@inheritDoc LoopDetectionConfig.unknownToolThreshold} */
  unknownToolThreshold?: number;
  /** {@inheritDoc LoopDetectionConfig.globalCircuitBreakerThreshold} */
  globalCircuitBreakerThreshold?: number;
  /** {@inheritDoc LoopDetectionConfig.maxBlockedCalls} */
  maxBlockedCalls?: number;
  /** Detector switches; each omitted one keeps the value beneath. */
  detectors?: Partial<LoopDetectorSwitches>;
  /** Post-compaction guard settings; each omitted one keeps the value beneath. */
  postCompactionGuard?: Partial<PostCompactionGuardConfig>;
  /** {@inheritDoc LoopDetectionConfig.pollTools} */
  pollTools?: readonly string[];
  /** {@inheritDoc LoopDetectionConfig.volatileKeys} */
  volatileKeys?: readonly string[];
  /** {@inheritDoc LoopDetectionConfig.toolOverrides} */
  toolOverrides?: Readonly<Record<string, LoopDetectionToolOverride>>;
}

type Rule =
  | { readonly kind: "value"; readonly expected: string; readonly test: (value: unknown) => boolean }
  | { readonly kind: "strings" }
  | { readonly kind: "count" }
  | { readonly kind: "object"; readonly fields: Readonly<Record<string, Rule>> }
  | { readonly kind: "record"; readonly entry: Rule };

const booleanRule: Rule = { kind: "value", expected: "a boolean", test: (value) => typeof value === "boolean" };
/**
 * The largest count a window size, threshold or limit may be. Detection
 * scans the window on every call, and a threshold no run can reach (2 ** 53)
 * silently turns a detector off: `enabled: false` says that plainly.
 */
export const MAX_LOOP_DETECTION_COUNT = 10_000;

/** A number; an integer above {@link MAX_LOOP_DETECTION_COUNT} is refused (other numbers that are not positive integers fall back to the default). */
const countRule: Rule = { kind: "count" };
const stringsRule: Rule = { kind: "strings" };

/** Every key `LoopDetectionOptions` accepts, nested blocks included; anything else is a typo. */
const OPTIONS_RULE: Rule = {
  kind: "object",
  fields: {
    enabled: booleanRule,
    historySize: countRule,
    warningThreshold: countRule,
    criticalThreshold: countRule,
    unknownToolThreshold: countRule,
    globalCircuitBreakerThreshold: countRule,
    maxBlockedCalls: countRule,
    detectors: {
      kind: "object",
      fields: {
        genericRepeat: booleanRule,
        knownPollNoProgress: booleanRule,
        pingPong: booleanRule,
        argumentChurn: booleanRule,
        repeatedError: booleanRule,
      },
    },
    postCompactionGuard: { kind: "object", fields: { windowSize: countRule, enabled: booleanRule } },
    pollTools: stringsRule,
    volatileKeys: stringsRule,
    toolOverrides: { kind: "record", entry: { kind: "object", fields: { volatileKeys: stringsRule } } },
  } satisfies Record<keyof LoopDetectionOptions, Rule>,
};

/**
 * Checks one layer of loop-detection settings as a user wrote it. `undefined`
 * (the layer, or any field) means "not set" and passes.
 *
 * @throws {TypeError} on an unknown key at any level, or a value of the wrong type
 */
export function checkLoopDetectionOptions(options: unknown): asserts options is LoopDetectionOptions | undefined {
  if (options !== undefined) check(options, OPTIONS_RULE, "");
}

function check(value: unknown, rule: Rule, path: string): void {
  switch (rule.kind) {
    case "value":
      if (!rule.test(value)) throw invalid(path, rule.expected, value);
      return;
    case "count":
      if (typeof value !== "number") throw invalid(path, "a number", value);
      if (Number.isInteger(value) && value > MAX_LOOP_DETECTION_COUNT) {
        throw invalid(path, `a number of calls, at most ${MAX_LOOP_DETECTION_COUNT} (to turn detection off, set enabled: false)`, value);
      }
      return;
    case "strings":
      if (!Array.isArray(value)) throw invalid(path, "an array of strings", value);
      for (let index = 0; index < value.length; index++) {
        const item: unknown = value[index];
        if (typeof item !== "string") throw invalid(`${path}[${index}]`, "a string", item);
      }
      return;
    case "object": {
      if (!isPlainObject(value)) throw invalid(path, "an object", value);
      const unknown = Object.keys(value).filter((key) => !Object.hasOwn(rule.fields, key));
      if (unknown.length > 0) throw unsupported(path, unknown, Object.keys(rule.fields));
      for (const [key, field] of Object.entries(rule.fields)) {
        if (value[key] !== undefined) check(value[key], field, join(path, key));
      }
      return;
    }
    case "record":
      if (!isPlainObject(value)) throw invalid(path, "an object", value);
      for (const [key, entry] of Object.entries(value)) {
        if (entry !== undefined) check(entry, rule.entry, join(path, key));
      }
      return;
  }
}

/** A plain object (also from another realm): not null, an array, a Map, a Date… */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  return Object.prototype.toString.call(value) === "[object Object]";
}

function join(path: string, key: string): string {
  const segment = /^[\w$-]+$/.test(key) ? key : JSON.stringify(key);
  return path === "" ? segment : `${path}.${segment}`;
}

function invalid(path: string, expected: string, value: unknown): TypeError {
  const subject = path === "" ? "options" : `option '${path}'`;
  return new TypeError(`Invalid loopDetection ${subject}: expected ${expected}, got ${describe(value)}`);
}

function unsupported(path: string, keys: readonly string[], known: readonly string[]): TypeError {
  const named = keys.map((key) => {
    const suggestion = closest(key, known);
    const full = join(path, key);
    return suggestion === undefined ? `'${full}'` : `'${full}' (did you mean '${join(path, suggestion)}'?)`;
  });
  return new TypeError(`Unsupported loopDetection option${keys.length === 1 ? "" : "s"} ${named.join(", ")}`);
}

/** The known key a typo most likely meant: same letters in another case, a few edits away, or cut short. */
function closest(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const candidate of known) {
    const other = candidate.toLowerCase();
    if (other === lower) return candidate;
    const distance = editDistance(lower, other);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best === undefined && lower.length >= 4) best = known.find((candidate) => candidate.toLowerCase().startsWith(lower));
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length];
}

/** The offending value, short: strings quoted, plain objects and arrays as JSON up to 60 characters, else their kind. */
function describe(value: unknown): string {
  switch (typeof value) {
    case "string":
      return truncate(JSON.stringify(value));
    case "bigint":
      return `${value}n`;
    case "function":
      return "a function";
    case "symbol":
    case "undefined":
    case "number":
    case "boolean":
      return String(value);
  }
  if (value === null) return "null";
  const tag = Object.prototype.toString.call(value).slice(8, -1);
  if (tag === "Object" || tag === "Array") {
    try {
      const json = JSON.stringify(value) as string | undefined;
      if (json !== undefined) return truncate(json);
    } catch {
      // a cycle or a bigint inside: name the kind instead
    }
  }
  return /^[AEIOU]/.test(tag) ? `an ${tag}` : `a ${tag}`;
}

function truncate(text: string): string {
  return text.length <= 60 ? text : `${text.slice(0, 57)}…`;
}
