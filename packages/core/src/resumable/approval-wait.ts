import { currentPlace } from "./run-context";

/**
 * Runs `wait` (a person deciding on a `requiresApproval` tool call) and, when
 * it happens inside a resumable run, records on the run's node that it waits
 * for that approval — committed before waiting, cleared after. A run whose
 * process dies meanwhile is then never continued automatically:
 * `resumeInterrupted` leaves it paused (reason `approval`) for `resumeRun`.
 * @internal
 */
export async function whileAwaitingApproval<T>(toolName: string, args: unknown, wait: () => T | Promise<T>): Promise<T> {
  const place = currentPlace();
  if (place === undefined) return wait();
  const { run } = place;
  // Parallel branches may wait for several approvals: the mark stays until the last one is decided.
  if (run.pendingApprovals++ === 0) {
    // Under the run's lease, like every write of the run: a worker that lost it asks nobody.
    run.update(run.runId, { metadata: { awaitingApproval: { toolName, args } } });
    await run.save();
  }
  try {
    return await wait();
  } finally {
    if (--run.pendingApprovals === 0) run.update(run.runId, { metadata: { awaitingApproval: null } });
  }
}

/** The approval a run's node says it was waiting for when its process stopped, if any. @internal */
export function pendingApproval(metadata: Readonly<Record<string, unknown>>): { toolName: string } | undefined {
  const waiting = metadata["awaitingApproval"] as { toolName?: unknown } | null | undefined;
  return waiting !== null && typeof waiting === "object" && typeof waiting.toolName === "string" ? { toolName: waiting.toolName } : undefined;
}
