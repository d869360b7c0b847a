import type { Hono } from "hono";
import type { ReachPolicy, SessionStoreLike } from "rein";
import type { Entries } from "./entries";

/** @internal what `serve` needs of an app made by `createServer`. */
export interface ServerState {
  readonly runs: Map<string, AbortController>;
  readonly store: SessionStoreLike;
  readonly ownsStore: boolean;
  closing: boolean;
  /**
   * Aborted by `close()` once no run is in flight: the event streams that
   * only watch (the runs feed, a background run's events) end on it rather
   * than hold the server's close for the grace period.
   */
  readonly ending: AbortController;
  /** For resuming interrupted runs when the server starts. */
  readonly entries: Entries;
  readonly reach: ReachPolicy;
}

const states = new WeakMap<Hono, ServerState>();

/** @internal */
export function registerState(app: Hono, state: ServerState): void {
  states.set(app, state);
}

/** @internal */
export function stateOf(app: Hono): ServerState | undefined {
  return states.get(app);
}
