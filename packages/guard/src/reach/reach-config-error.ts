import { UsageError, type ReinErrorOptions } from "../errors/rein-error";

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
