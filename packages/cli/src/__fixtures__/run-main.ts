import { main } from "../cli";
import type { CliIo } from "../cli-io";

/** Runs `rein` in-process (stdout not a TTY) and collects what it writes. */
export async function runMain(argv: string[], cwd = process.cwd()): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io: CliIo = { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text), isTTY: false, cwd, env: process.env };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}
