/**
 * Where the command writes and what it knows of its terminal; `main` takes
 * one so tests can run it in-process.
 * @example
 * ```ts
 * const io: CliIo = { stdout: (text) => out.push(text), stderr: (text) => err.push(text), isTTY: false, cwd: process.cwd(), env: process.env };
 * ```
 */
export interface CliIo {
  /** Writes text to standard output as is (no newline added). */
  stdout(text: string): void;
  /** Writes text to standard error as is (no newline added). */
  stderr(text: string): void;
  /** Whether standard output is a terminal: the status line is redrawn in place only then. */
  readonly isTTY: boolean;
  /** The directory relative paths (module, store) are resolved from. */
  readonly cwd: string;
  /** The environment passed on to a run's child process. */
  readonly env: NodeJS.ProcessEnv;
}

/**
 * The {@link CliIo} of the current process.
 * @example
 * ```ts
 * process.exitCode = await main(process.argv.slice(2), processIo());
 * ```
 */
export function processIo(): CliIo {
  return {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    isTTY: process.stdout.isTTY === true,
    cwd: process.cwd(),
    env: process.env,
  };
}
