import { Context, SessionNodeWriter, withReachBudget, withRunListener, type ReachBudget, type ReachPolicy, type RunEventListener, type SessionStoreLike, type SpendReserver, type ToolApprover, type TurnContinuation } from "rein";
import { instantiate, type Entry } from "./entries";
import { whenAborted } from "./when-aborted";

/** @internal What {@link callEntry} needs to call one entry once. */
export interface CallEntryOptions {
  readonly entry: Entry;
  /** The entry's listed name (for the error when the method is missing). */
  readonly entryName: string;
  readonly args: readonly unknown[];
  readonly store: SessionStoreLike;
  /** The session the run records into, as stored (the owner's prefix included). */
  readonly storedSessionId: string;
  readonly runId: string;
  /** The admitted budget (already clamped to `policy`). */
  readonly budget: ReachBudget;
  readonly policy: ReachPolicy;
  readonly traceparent?: string;
  readonly signal: AbortSignal;
  readonly onEvent: RunEventListener;
  readonly approveToolCall?: ToolApprover;
  /** Where each model request of the call reserves its spend (a capped API key). */
  readonly spend?: SpendReserver;
  /** Resume this paused turn (`resumeTurn(continuation, { approve })` on the entry's object) instead of calling the method with `args`. */
  readonly resume?: { readonly continuation: TurnContinuation; readonly approve: boolean };
}

/** @internal The value of {@link callEntry} when its signal aborted before the entry returned. */
export const CANCELLED: unique symbol = Symbol("cancelled");

/**
 * @internal Calls an entry the way every server path does — `POST
 * /v1/agent/run` in the request and a background job in `rein worker` —
 * one home for it: the entry built with the run's listener, signal, id and
 * approver (or the entry's paused turn resumed); every run it makes reports to `onEvent` and is cancelled by
 * `signal`; the call runs inside the admitted budget (traceparent
 * continued) in a context recording into the stored session. Resolves with
 * the method's value, or {@link CANCELLED} once `signal` aborts; rejects
 * with the entry's error.
 */
export async function callEntry(options: CallEntryOptions): Promise<unknown> {
  const { entry, signal, onEvent, budget, policy, traceparent } = options;
  const target = instantiate(entry, { onEvent, signal, runId: options.runId, ...(options.approveToolCall === undefined ? {} : { approveToolCall: options.approveToolCall }) });
  const { resume } = options;
  const method = resume === undefined ? target[entry[1]] : target["resumeTurn"];
  if (typeof method !== "function") {
    throw new TypeError(
      resume === undefined
        ? `entry '${options.entryName}': the factory's object has no method '${entry[1]}'`
        : `entry '${options.entryName}': its object has no resumeTurn (an Agent resumes a paused turn): build the agent that pauses as the entry's object`,
    );
  }
  const args = resume === undefined ? options.args : [resume.continuation, { approve: resume.approve }];
  // Every run the entry makes reports to this caller (events, usage) and is cancelled by it, class or factory entry alike.
  const call = () =>
    withRunListener(
      onEvent,
      () => withReachBudget(budget, () => (method as (...args: unknown[]) => unknown).apply(target, args as unknown[]), { policy, ...(traceparent === undefined ? {} : { traceparent }) }),
      { signal, ...(options.spend === undefined ? {} : { spend: options.spend }) },
    );
  // On a store with asyncReads (Postgres with asyncWrites) the session, its head and the history behind it are
  // read here, awaited: the call then reads nothing synchronously, and a stalled database never holds the event loop.
  const writer = await SessionNodeWriter.open(options.store, options.storedSessionId);
  await writer.readAhead();
  const context = Context.forSession(writer, options.storedSessionId);
  // A cancel or hang-up that came while the run was starting (its key's slot, the store's reads) is not lost.
  if (signal.aborted) return CANCELLED;
  const aborted = new Promise<typeof CANCELLED>((resolve) => whenAborted(signal, () => resolve(CANCELLED)));
  let value: unknown;
  try {
    value = await Promise.race([Promise.resolve().then(context.bind(call)), aborted]);
  } catch (error) {
    // The run's error is the answer; what it wrote goes in all the same, when the store can take it.
    await writer.flushAsync().catch(() => undefined);
    throw error;
  }
  // What the run wrote is stored before it is answered (on an asynchronous store the commits were only started).
  if (value !== CANCELLED) await writer.flushAsync();
  return value;
}
