import { readFileSync, watch, type FSWatcher } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Document } from "yaml";
import { UsageError, type ReinErrorOptions } from "../errors/rein-error";
import type { ReachPolicyOptions } from "./reach-budget";
import { ReachPolicy, type ReachLimits } from "./reach-policy";

let yamlModule: typeof import("yaml") | undefined;
/** The YAML parser, loaded on the first config read: importing Rein does not pay for it (~18 ms). */
function yaml(): typeof import("yaml") {
  return (yamlModule ??= require("yaml") as typeof import("yaml"));
}

/** Where {@link loadReachConfig} looks when given no path and `REIN_REACH_CONFIG` is unset, relative to `process.cwd()`. */
export const DEFAULT_REACH_CONFIG_PATH = "config/reach.yaml";

/** Where a {@link ReachConfigError} points, besides its file. */
export interface ReachConfigErrorOptions extends ReinErrorOptions {
  /** The full key path (`environments.prod.max_logic_depth`), or `REIN_ENV`. */
  key?: string;
  /** The offending value. */
  value?: unknown;
  /** 1-based line in the file. */
  line?: number;
  /** 1-based column in the file. */
  column?: number;
}

/**
 * The reach config file cannot be used: missing or unreadable, not valid
 * YAML, an unknown key, a value of the wrong type or range, or a `REIN_ENV`
 * naming no environment of the file. The message names the file (with line
 * and column when known), the key and the value.
 * @example
 * ```ts
 * err.message; // "reach config /app/config/reach.yaml:7:22: environments.prod.max_logic_depth must be a positive integer, got -1"
 * ```
 */
export class ReachConfigError extends UsageError {
  static {
    this.defineErrorName("ReachConfigError");
  }

  /** The absolute path of the config file. */
  readonly file: string;
  /** The full key path (`environments.prod.max_logic_depth`), `REIN_ENV`, or `undefined` when the whole file is at fault. */
  readonly key: string | undefined;
  /** The offending value (`undefined` when the whole file is at fault). */
  readonly value: unknown;
  /** 1-based line, when known. */
  readonly line: number | undefined;
  /** 1-based column, when known. */
  readonly column: number | undefined;

  /** `problem` follows `reach config <file>[:line:column]: ` in the message; it should name the key and the value. */
  constructor(file: string, problem: string, options: ReachConfigErrorOptions = {}) {
    const where = options.line === undefined ? file : `${file}:${options.line}:${options.column ?? 1}`;
    super(`reach config ${where}: ${problem}`, options);
    this.file = file;
    this.key = options.key;
    this.value = options.value;
    this.line = options.line;
    this.column = options.column;
  }
}

/**
 * Options of {@link loadReachConfig}.
 * @example
 * ```ts
 * loadReachConfig("config/reach.yaml", { environment: "prod", onError: (error) => log.warn(error.message), reloadSignal: "SIGHUP" });
 * ```
 */
export interface ReachConfigOptions {
  /** The environment whose section overrides `defaults`. @default process.env.REIN_ENV (unset or empty: defaults only) */
  environment?: string;
  /** Called with the error of a reload that failed (the previous limits stay). Never called for the first load, which throws. @default process.emitWarning */
  onError?: (error: ReachConfigError) => void;
  /** Called with the new limits after each reload that applied. */
  onReload?: (limits: ReachLimits) => void;
  /** Reload when the file changes (`fs.watch` on the file and its directory). @default true */
  watch?: boolean;
  /** The signal that forces a reload, or `false` for none. Node starts its inspector on SIGUSR1 when no listener is installed. @default "SIGUSR1" */
  reloadSignal?: NodeJS.Signals | false;
  /** Quiet time after the last file event before reloading, in ms. @default 100 */
  debounceMs?: number;
  /** Prices per model for `max_cost_usd` (the file holds no prices); kept across reloads. */
  pricing?: ReachPolicyOptions["pricing"];
}

/**
 * A {@link ReachPolicy} read from a reach config file and kept in step with
 * it: the file is read synchronously when constructed, then reloaded when it
 * changes and on the reload signal. Each reload validates the whole file
 * first and swaps the frozen `limits` snapshot in one assignment: a reader
 * sees the old limits or the new ones, never a mix, and a run that took
 * `policy.limits` when it started (`ReachRun`) is never loosened beyond
 * them. A reload that fails keeps the previous limits and reports through
 * `onError`. Calling `update()` yourself works until the next reload
 * replaces it with the file's limits.
 * @example
 * ```ts
 * const reach = new ReachConfigPolicy("config/reach.yaml", { onError: (e) => log.warn(e.message) });
 * const runtime = new Runtime({ reach });
 * process.on("beforeExit", () => reach.close());
 * ```
 */
export class ReachConfigPolicy extends ReachPolicy {
  /** The absolute path of the config file. */
  readonly path: string;
  /** The environment in force (from `REIN_ENV` or the `environment` option), fixed for the policy's life; `undefined`: defaults only. */
  readonly environment: string | undefined;
  readonly #options: ReachConfigOptions;
  #lastText: string | undefined;
  #closed = false;
  #directoryWatcher: FSWatcher | undefined;
  #fileWatcher: FSWatcher | undefined;
  #timer: NodeJS.Timeout | undefined;
  #forced = false;
  readonly #onSignal = (): void => this.#schedule(true);

  /**
   * Reads and validates the file synchronously, then starts watching.
   * @param path The config file. @default process.env.REIN_REACH_CONFIG, else `config/reach.yaml` under `process.cwd()`
   * @throws ReachConfigError naming the file, key and value.
   */
  constructor(path?: string, options: ReachConfigOptions = {}) {
    const file = resolveReachConfigPath(path);
    const environment = (options.environment ?? process.env.REIN_ENV) || undefined;
    const text = readConfigFile(file);
    super(withPricing(parseReachConfig(file, text, environment), options.pricing));
    this.path = file;
    this.environment = environment;
    this.#options = options;
    this.#lastText = text;
    if (options.watch !== false) this.#watch();
    const signal = options.reloadSignal ?? "SIGUSR1";
    // A signal listener does not keep the process alive (Node unrefs it).
    if (signal !== false) process.on(signal, this.#onSignal);
  }

  /**
   * Reads the file now and applies it (what a file change or the signal does,
   * without the debounce). Works after {@link close} too.
   * @throws ReachConfigError when the file cannot be used; the limits stay as they were.
   */
  reload(): void {
    this.#apply(true);
  }

  /** Stops watching the file and listening for the reload signal. Idempotent; the limits stay as they are. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#directoryWatcher?.close();
    this.#fileWatcher?.close();
    const signal = this.#options.reloadSignal ?? "SIGUSR1";
    if (signal !== false) process.off(signal, this.#onSignal);
  }

  #apply(force: boolean): void {
    const text = readConfigFile(this.path);
    // Any event in the directory schedules a reload; unchanged text is not news.
    if (!force && text === this.#lastText) return;
    this.#lastText = text;
    const options = withPricing(parseReachConfig(this.path, text, this.environment), this.#options.pricing);
    this.update(options);
    const onReload = this.#options.onReload;
    if (onReload === undefined) return;
    try {
      onReload(this.limits);
    } catch (error) {
      emitWarningSafely(error);
    }
  }

  // The directory watcher sees a rename-replace (editors, `kubectl` symlink swaps);
  // the file watcher sees writes through a symlink to another directory. It is
  // re-armed after each reload, as after a rename it watches the old inode.
  #watch(): void {
    try {
      this.#directoryWatcher = watch(dirname(this.path), { persistent: false }, () => this.#schedule(false));
      this.#directoryWatcher.on("error", (error) => this.#report(error));
    } catch (error) {
      this.#report(error);
    }
    this.#watchFile();
  }

  #watchFile(): void {
    this.#fileWatcher?.close();
    this.#fileWatcher = undefined;
    if (this.#closed || this.#options.watch === false) return;
    try {
      this.#fileWatcher = watch(this.path, { persistent: false }, () => this.#schedule(false));
      // The directory watcher stays; the next reload re-arms this one.
      this.#fileWatcher.on("error", () => this.#fileWatcher?.close());
    } catch {
      // The file is gone for now (mid-replace); the directory watcher sees it come back.
    }
  }

  #schedule(force: boolean): void {
    if (this.#closed) return;
    this.#forced ||= force;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#reloadReporting(), this.#options.debounceMs ?? 100);
    this.#timer.unref();
  }

  #reloadReporting(): void {
    const force = this.#forced;
    this.#forced = false;
    this.#timer = undefined;
    if (this.#closed) return;
    try {
      this.#apply(force);
    } catch (error) {
      this.#report(error);
    }
    this.#watchFile();
  }

  // Never throws: a watcher or signal callback must not crash the process.
  #report(error: unknown): void {
    const configError = ReachConfigError.isInstance(error)
      ? error
      : new ReachConfigError(this.path, `reload failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    try {
      if (this.#options.onError === undefined) emitWarningSafely(configError);
      else this.#options.onError(configError);
    } catch (failure) {
      emitWarningSafely(failure);
    }
  }
}

/**
 * Reads the reach config file (synchronously) and returns a live
 * {@link ReachConfigPolicy}: `new Runtime({ reach })` takes it like any
 * `ReachPolicy`. Its limits follow the file (reloaded on change and on
 * SIGUSR1) until `close()`.
 *
 * File: `path`, else `REIN_REACH_CONFIG`, else `config/reach.yaml` under
 * `process.cwd()`. Environment: `REIN_ENV` (its section overrides
 * `defaults` key by key).
 * @throws ReachConfigError naming the file, key and value.
 * @example
 * ```ts
 * const reach = loadReachConfig(); // config/reach.yaml, environment from REIN_ENV
 * reach.limits.maxLogicDepth; // 5
 * reach.close();
 * ```
 */
export function loadReachConfig(path?: string, options?: ReachConfigOptions): ReachConfigPolicy {
  return new ReachConfigPolicy(path, options);
}

type Field = { readonly option: keyof ReachPolicyOptions; readonly expected: string; readonly valid: (value: unknown) => boolean };

const positive = (integer: boolean) => (value: unknown): boolean =>
  typeof value === "number" && (value === Infinity || (Number.isFinite(value) && value > 0 && (!integer || Number.isInteger(value))));

const FIELDS: Readonly<Record<string, Field>> = {
  max_logic_depth: { option: "maxLogicDepth", expected: "a positive integer", valid: positive(true) },
  max_memory_mb: { option: "maxMemoryMb", expected: "a positive number", valid: positive(false) },
  memory_growth: {
    option: "memoryGrowth",
    expected: "a number ≥ 0 (0.15 = 15% more per level)",
    valid: (value) => typeof value === "number" && Number.isFinite(value) && value >= 0,
  },
  allowed_zones: {
    option: "allowedZones",
    expected: "a non-empty list of zone names",
    valid: (value) => Array.isArray(value) && value.length > 0 && value.every((zone) => typeof zone === "string" && zone !== ""),
  },
  max_tokens: { option: "maxTokens", expected: "a positive integer (or .inf for unlimited)", valid: positive(true) },
  max_cost_usd: { option: "maxCostUsd", expected: "a positive number (or .inf for unlimited)", valid: positive(false) },
  timeout_ms: { option: "timeoutMs", expected: "a positive number (or .inf for unlimited)", valid: positive(false) },
};

function resolveReachConfigPath(path: string | undefined): string {
  return resolve(process.cwd(), path ?? (process.env.REIN_REACH_CONFIG || DEFAULT_REACH_CONFIG_PATH));
}

function readConfigFile(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const problem =
      code === "ENOENT"
        ? "file not found (pass a path to loadReachConfig or set REIN_REACH_CONFIG)"
        : `cannot read the file: ${error instanceof Error ? error.message : String(error)}`;
    throw new ReachConfigError(file, problem, { cause: error });
  }
}

function withPricing(options: ReachPolicyOptions, pricing: ReachPolicyOptions["pricing"]): ReachPolicyOptions {
  return pricing === undefined ? options : { ...options, pricing };
}

/** The policy options `text` gives for `environment`, the whole file validated. */
function parseReachConfig(file: string, text: string, environment: string | undefined): ReachPolicyOptions {
  const { LineCounter, parseDocument } = yaml();
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false });
  const syntaxError = document.errors[0];
  if (syntaxError !== undefined) {
    const { line, col } = lineCounter.linePos(syntaxError.pos[0]);
    throw new ReachConfigError(file, `YAML syntax error: ${syntaxError.message}`, { line, column: col, cause: syntaxError });
  }
  const fail = (path: readonly string[], problem: string, value: unknown, part: "key" | "value" = "value"): never => {
    const offset = locate(document, path, part);
    const position = offset === undefined ? {} : { line: lineCounter.linePos(offset).line, column: lineCounter.linePos(offset).col };
    throw new ReachConfigError(file, problem, { key: path.join("."), value, ...position });
  };
  const root: unknown = document.toJS({ maxAliasCount: 100 });
  if (root === null || root === undefined) {
    throw new ReachConfigError(file, "the file is empty; expected `defaults:` and/or `environments:`");
  }
  if (!isPlainObject(root)) {
    throw new ReachConfigError(file, `the top level must be a mapping with \`defaults:\` and/or \`environments:\`, got ${show(root)}`, { value: root });
  }
  for (const key of Object.keys(root)) {
    if (key !== "defaults" && key !== "environments") fail([key], `unknown key ${key} (known: defaults, environments)`, root[key], "key");
  }
  const section = (path: readonly string[], value: unknown): ReachPolicyOptions => {
    if (value === null || value === undefined) return {};
    if (!isPlainObject(value)) return fail(path, `${path.join(".")} must be a mapping of limits such as max_logic_depth: 5, got ${show(value)}`, value);
    const options: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const keyPath = [...path, key];
      const field = FIELDS[key];
      if (field === undefined) {
        const snake = key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
        const hint = FIELDS[snake] === undefined ? `known: ${Object.keys(FIELDS).join(", ")}` : `did you mean ${snake}?`;
        fail(keyPath, `unknown key ${keyPath.join(".")} (${hint})`, item, "key");
      } else if (!field.valid(item)) {
        fail(keyPath, `${keyPath.join(".")} must be ${field.expected}, got ${show(item)}`, item);
      } else {
        options[field.option] = item;
      }
    }
    return options as ReachPolicyOptions;
  };
  const defaults = section(["defaults"], root.defaults);
  const environments = root.environments ?? {};
  if (!isPlainObject(environments)) {
    return fail(["environments"], `environments must be a mapping of environment names to limits, got ${show(environments)}`, environments);
  }
  const sections = new Map(Object.entries(environments).map(([name, value]) => [name, section(["environments", name], value)]));
  if (environment === undefined) return defaults;
  const chosen = sections.get(environment);
  if (chosen === undefined) {
    const names = sections.size === 0 ? "the file has no environments" : `the file has: ${[...sections.keys()].join(", ")}`;
    throw new ReachConfigError(file, `REIN_ENV=${JSON.stringify(environment)} names no environment (${names})`, { key: "REIN_ENV", value: environment });
  }
  return { ...defaults, ...chosen };
}

/** The offset of a key (or of its value) in the document, for the error's line and column. */
function locate(document: Document, path: readonly string[], part: "key" | "value"): number | undefined {
  const { isMap, isScalar } = yaml();
  let node: unknown = document.contents;
  let offset: number | undefined;
  for (const [index, segment] of path.entries()) {
    if (!isMap(node)) return offset;
    const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === segment);
    if (pair === undefined) return offset;
    offset = (pair.key as { range?: readonly number[] }).range?.[0] ?? offset;
    node = pair.value;
    if (index === path.length - 1 && part === "value") offset = (node as { range?: readonly number[] } | null)?.range?.[0] ?? offset;
  }
  return offset;
}

function emitWarningSafely(warning: unknown): void {
  if (warning instanceof Error) {
    try {
      process.emitWarning(warning);
      return;
    } catch {
      // An Error of another realm (a test sandbox): Node refuses it, so send its name and message.
    }
  }
  const error = warning as { readonly name?: unknown; readonly message?: unknown } | null | undefined;
  const message = typeof error?.message === "string" ? error.message : String(warning);
  process.emitWarning(message, { type: typeof error?.name === "string" ? error.name : "Warning" });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function show(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (value === undefined) return "nothing";
  return JSON.stringify(value) ?? String(value);
}
