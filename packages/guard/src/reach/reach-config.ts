import { watch, type FSWatcher } from "node:fs";
import { dirname } from "node:path";
import type { ReachPolicyOptions } from "./reach-budget";
import { ReachPolicy, type ReachLimits } from "./reach-policy";
import { ReachConfigError } from "./reach-config-error";
import { parseReachConfig, readConfigFile, resolveReachConfigPath } from "./reach-config-file";

export { ReachConfigError } from "./reach-config-error";
export type { ReachConfigErrorOptions } from "./reach-config-error";
export { DEFAULT_REACH_CONFIG_PATH } from "./reach-config-file";

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

function withPricing(options: ReachPolicyOptions, pricing: ReachPolicyOptions["pricing"]): ReachPolicyOptions {
  return pricing === undefined ? options : { ...options, pricing };
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
