import { join } from "node:path";
import type { CliIo } from "../cli-io";
import { ExitCode } from "../exit-codes";
import { serveCommand, type ServeCommandOptions } from "../serve-command";

/** The example module the CLI tests serve. */
export const CLI_CHAIN_EXAMPLE = join(__dirname, "..", "..", "..", "..", "examples", "cli-chain.ts");

/**
 * Runs `rein serve` on the cli-chain example in-process (cwd `dir`) until
 * `stop` is called; `url` resolves once it listens (and rejects if it stops
 * before), `out` is what it printed so far.
 */
export function serving(dir: string, options: ServeCommandOptions): { url: Promise<string>; out: () => string; stop: () => Promise<number> } {
  let out = "";
  let listening: (url: string) => void = () => undefined;
  const listened = new Promise<string>((resolve) => (listening = resolve));
  const io: CliIo = {
    stdout: (text) => {
      out += text;
      const found = /on (http:\/\/[^\s]+:\d+)/.exec(out);
      if (found) listening(found[1]!);
    },
    stderr: (text) => (out += text),
    isTTY: false,
    cwd: dir,
    env: process.env,
  };
  let finish: (code: number) => void = () => undefined;
  const until = new Promise<number>((resolve) => (finish = resolve));
  const done = serveCommand(io, CLI_CHAIN_EXAMPLE, { port: 0, mintRootBudget: true, until, ...options });
  const url = Promise.race([listened, done.then(() => Promise.reject(new Error(`rein serve stopped: ${out}`)))]);
  url.catch(() => undefined);
  return { url, out: () => out, stop: () => (finish(ExitCode.Ok), done) };
}
