/**
 * The texts of loop verdicts (internal). Each starts with `WARNING:` or
 * `CRITICAL:`, names the tool and the count, and says what to do instead:
 * the model reads them, so they address it directly.
 */

export function unknownToolMessage(toolName: string, count: number): string {
  return (
    `CRITICAL: the tool "${toolName}" does not exist and you have tried to call it ${count} times in a row. ` +
    `Stop calling it: use one of the tools you were given, or answer without it.`
  );
}

export function circuitBreakerMessage(toolName: string, count: number): string {
  return (
    `CRITICAL: ${toolName} has returned the same result for the same arguments ${count} times. ` +
    `This call is blocked to stop a runaway loop: use the result you already have, change your approach, ` +
    `or report that the task cannot be completed.`
  );
}

export function pollMessage(level: "warning" | "critical", toolName: string, count: number): string {
  return level === "critical"
    ? `CRITICAL: you have polled ${toolName} ${count} times with the same arguments and its result has not changed. ` +
        `Polling is blocked: stop waiting on it and report the job as stuck or failed.`
    : `WARNING: you have polled ${toolName} ${count} times with the same arguments and its result has not changed. ` +
        `Wait longer between checks, or stop polling and report the job as stuck.`;
}

export function pingPongMessage(
  level: "warning" | "critical",
  toolName: string,
  pairedToolName: string,
  count: number,
): string {
  const pair = pairedToolName === toolName ? `two calls of ${toolName}` : `${toolName} and ${pairedToolName}`;
  return level === "critical"
    ? `CRITICAL: you have alternated between ${pair} for ${count} calls and neither returned anything new. ` +
        `This call is blocked: stop alternating and answer with what you have, or report the task as failed.`
    : `WARNING: you have alternated between ${pair} for ${count} calls. ` +
        `If this is not making progress, stop alternating and try a different approach.`;
}

export function genericRepeatMessage(level: "warning" | "critical", toolName: string, count: number): string {
  return level === "critical"
    ? `CRITICAL: you have called ${toolName} ${count} times with identical arguments and identical outcomes. ` +
        `This call is blocked: calling it again will not change the result — use the result you have or change the arguments or approach.`
    : `WARNING: you have called ${toolName} ${count} times with identical arguments. ` +
        `If the result is not changing, stop repeating the call: use the result you have or try a different approach.`;
}

export function argumentChurnMessage(toolName: string, patterns: number, count: number): string {
  return (
    `CRITICAL: you have cycled ${toolName} and ${patterns - 1} other call pattern${patterns === 2 ? "" : "s"} ` +
    `for ${count} calls without getting any new result. This call is blocked: stop varying the same few arguments ` +
    `and change the approach, or report what is missing.`
  );
}

export function repeatedErrorMessage(toolName: string, count: number): string {
  return (
    `CRITICAL: ${toolName} has failed with the same error ${count} times in a row. ` +
    `This call is blocked: read the error and fix its cause, use another tool, or report the failure.`
  );
}
