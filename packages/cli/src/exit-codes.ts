/**
 * The exit codes of the `rein` command.
 * @example
 * ```ts
 * process.exitCode = ExitCode.UsageError;
 * ```
 */
export const ExitCode = {
  /** The command did what it was asked. */
  Ok: 0,
  /** The run (or the command's work) failed; the error is printed in one line. */
  Failed: 1,
  /** Bad arguments or options: unknown command, missing `--task`, malformed `<module>#<entry>`. */
  UsageError: 2,
  /** Interrupted by Ctrl-C (SIGINT); running nodes are recorded `interrupted`. */
  Interrupted: 130,
} as const;

/** One of the values of {@link ExitCode}. */
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * A usage error of the command line (exit code 2), printed in one line.
 * @example
 * ```ts
 * throw new CliUsageError("--max-reach must be a positive integer, got 'x'");
 * ```
 */
export class CliUsageError extends Error {
  override readonly name = "CliUsageError";
}
