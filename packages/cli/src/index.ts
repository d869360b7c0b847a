/**
 * `@rein/cli` — the `rein` command: run an agent chain with a live reach
 * status line, inspect and export recorded sessions.
 * @packageDocumentation
 */
export { main } from "./cli";
export { processIo } from "./cli-io";
export type { CliIo } from "./cli-io";
export { ExitCode, CliUsageError } from "./exit-codes";
export type { ExitCodeValue } from "./exit-codes";
export { runCommand } from "./run-command";
export type { RunCommandOptions } from "./run-command";
export { serveCommand } from "./serve-command";
export { listRuns, resumeCommand } from "./runs-command";
export type { ResumeCommandOptions } from "./runs-command";
export type { ServeCommandOptions } from "./serve-command";
export { createKey, listKeys, revokeKey } from "./keys-command";
export type { CreateKeyOptions } from "./keys-command";
export { DEFAULT_STORE_PATH, listSessions, showSession, exportSession } from "./sessions-command";
export type { ExportFormat } from "./sessions-command";
export { formatStatusLine, clock } from "./status-line";
export type { ReachFigures, StatusMessage } from "./status-line";
