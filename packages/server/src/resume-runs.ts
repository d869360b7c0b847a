import {
  Agent,
  agentClassId,
  Context,
  resumeInterrupted,
  SessionNodeWriter,
  type ReachPolicy,
  type ResumeInterruptedReport,
  type RunRecord,
  type SessionStoreLike,
  type ToolApprover,
} from "rein";
import { isAgentClass, type EntryClass, type Entries } from "./entries";
import { runsOf, storeReads } from "./store-reads";

/**
 * The class entry that can resume a run of `name` (`Pipeline.process`, or
 * `billing.Pipeline.process` for a class with `static id =
 * "billing.Pipeline"`: a `RunRecord.name`): a listed Agent class that is, or
 * extends, the class whose durable id (`agentClassId`: its static id, else
 * its class name) is named there, and has the method. Matched by id, never
 * by `.name` alone: a minified class keeps its id, and two classes of one
 * name are told apart by theirs. Factory entries cannot be told apart, so
 * they are not used. The server's resume route and `rein runs resume` use it.
 * @example
 * ```ts
 * const Pipeline = entryClassFor(entries, store.getRun(runId)!.name);
 * ```
 */
export function entryClassFor(entries: Entries, name: string): EntryClass | undefined {
  const dot = name.lastIndexOf(".");
  const classId = name.slice(0, dot);
  const method = name.slice(dot + 1);
  for (const entry of Object.values(entries) as unknown[]) {
    // A module's entries come unchecked from `rein runs resume`: anything but [Class, "method"] is passed over.
    const target: unknown = Array.isArray(entry) ? entry[0] : undefined;
    if (typeof target !== "function" || !isAgentClass(target) || typeof (target.prototype as unknown as Record<string, unknown>)[method] !== "function") continue;
    for (let type: Function | null = target; type !== null && type !== Agent; type = Object.getPrototypeOf(type) as Function | null) {
      if (agentClassId(type) === classId) return target;
    }
  }
  return undefined;
}

/**
 * An agent of the run's class, recording to the run's session of `store`,
 * under the server's local policy: the one that resumes the run, asking
 * `approveToolCall` (when given) about its `requiresApproval` calls. Its
 * session's writer is opened on the store's pool when it has one, so no
 * synchronous read holds the event loop.
 * @internal
 */
export async function agentForRun(entry: EntryClass, store: SessionStoreLike, record: RunRecord, reach: ReachPolicy, approveToolCall?: ToolApprover): Promise<Agent> {
  const construct = entry as unknown as new (options: { context: Context; reach: ReachPolicy; approveToolCall?: ToolApprover }) => Agent;
  const writer = await SessionNodeWriter.open(store, record.sessionId);
  return new construct({ context: Context.forSession(writer, record.sessionId), reach, ...(approveToolCall === undefined ? {} : { approveToolCall }) });
}

/**
 * What a server does when it starts on a store that keeps runs: the runs a
 * restart or crash interrupted less than 2 hours ago continue (core's
 * `resumeInterrupted`) with an agent of their entry class each; the rest are
 * reported with the reason they wait for `POST /v1/runs/:id/resume`.
 * @internal
 */
export async function resumeOnStart(entries: Entries, store: SessionStoreLike, reach: ReachPolicy): Promise<ResumeInterruptedReport> {
  if (runsOf(store) === undefined) return { resumed: [], leftAlone: [] };
  // Held until the report is in: core finds the agents that can continue a run among the live ones.
  const agents: Agent[] = [];
  for (const record of await storeReads(store).listRuns(["running", "interrupted"])) {
    const entry = entryClassFor(entries, record.name);
    if (entry !== undefined) agents.push(await agentForRun(entry, store, record, reach));
  }
  const report = await resumeInterrupted({ store });
  agents.length = 0;
  return report;
}
