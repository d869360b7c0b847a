import type { ChainLimits, ReachError, ReachPolicy } from "@rein/guard";
import type { Context } from "../context/context";
import type { RunEvents } from "../runtime/run-events";

/** Where a scoped call takes its Context and guard limits from (an Agent). */
export interface ScopeOwner {
  /** The Context a call of the owner binds, given the caller's (own Context first, then the caller's). */
  contextFor(callerContext: Context | undefined): Context;
  /** Guard limits of the owner (recursion ceiling, cycle repeats, chain depth); undefined = defaults. */
  readonly scopeLimits: ChainLimits | undefined;
  /**
   * Where the owner's calls report: its runtime's listener and logger,
   * chained under the caller's sink (so calls outside any model-tool loop
   * report too, and a nested agent's runtime hears its own calls).
   */
  eventsFor?(parent: RunEvents | undefined): RunEvents | undefined;
  /**
   * Set on Agents: entering one of its methods from outside the agent is an
   * Agent entry (one level of logic depth), checked against the reach
   * policy that applies (`reachPolicy`).
   */
  readonly agentEntry?: {
    readonly reachPolicy: ReachPolicy | undefined;
    /** Called instead of throwing when reach refuses the entry; its value is the call's result. */
    readonly fallback: ((task: { readonly name: string; readonly args: readonly unknown[] }, error: ReachError) => unknown) | undefined;
  };
}
