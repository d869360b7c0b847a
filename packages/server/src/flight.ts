import type { KeyRun } from "./auth/key-spend";
import type { Caller } from "./auth/caller";
import { RequestError } from "./http-error";
import { flightKey } from "./ownership";
import type { ServerState } from "./server-state";

/**
 * A run in flight on this server: listed in `state.runs` under its owner
 * and id (so `/healthz` counts it, `POST /v1/runs/:id/cancel` and `close()`
 * reach it), holding one of its key's run slots. @internal
 */
export interface Flight {
  /** Fires when the run is cancelled (a client's cancel, a hang-up, the server closing). */
  readonly controller: AbortController;
  /** The key's run (its spend reserver), or undefined for a key without caps. */
  readonly keyRun: KeyRun | undefined;
  /** Ends the flight, once: the id leaves the server's runs and the key's slot is given back. */
  land(): void;
}

/**
 * Puts run `runId` of `caller` in flight — the one way every route starts
 * one (a new run, a resume, a paused turn an approval carries on). While
 * the server closes, nothing starts (`shutting_down`). The id is claimed
 * before anything is awaited, so two requests naming the same id cannot
 * both pass (the second gets `conflict`); then the key's run slot is taken
 * (`startRun`: a 429 over a cap), and the claim is let go if that fails.
 * @internal
 */
export async function startFlight(
  state: Pick<ServerState, "runs" | "closing">,
  caller: Caller,
  runId: string,
  startRun: (caller: Caller) => Promise<KeyRun | undefined>,
  report: (error: unknown) => void,
  conflict: () => RequestError,
): Promise<Flight> {
  if (state.closing) throw shuttingDown();
  const { runs } = state;
  const key = flightKey(caller.owner, runId);
  if (runs.has(key)) throw conflict();
  const controller = new AbortController();
  runs.set(key, controller);
  const letGo = () => {
    if (runs.get(key) === controller) runs.delete(key);
  };
  let keyRun: KeyRun | undefined;
  try {
    keyRun = await startRun(caller);
  } catch (error) {
    letGo();
    throw error;
  }
  let landed = false;
  return {
    controller,
    keyRun,
    land() {
      if (landed) return;
      landed = true;
      letGo();
      void keyRun?.end().catch(report);
    },
  };
}

/** The conflict of a run id already in flight, for a route that does not take it from the client. @internal */
export const runInFlight = (runId: string) => () => new RequestError("run_conflict", `run '${runId}' is in flight on this server already`);

/** The refusal of work asked of a server whose `close()` is under way (503). @internal */
export const shuttingDown = () => new RequestError("shutting_down", "the server is shutting down; retry on another instance");
