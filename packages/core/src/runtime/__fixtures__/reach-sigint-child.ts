/**
 * Child process for reach-sigint.test.ts: a long-lived "server" whose
 * SIGINT handler cancels the run in flight (its AbortController) without
 * exiting. The run nests three distinct Agents under a reach policy and
 * hangs at logic depth 3 until cancelled; then the process starts a new
 * run and prints the depth its first Agent entry sees. Counters bumped on
 * enter and dropped on exit would leak the three levels here; Rein's
 * depth lives in the call scopes, so the new run sees 1.
 */
import { Agent, CancelledError, currentReach } from "@rein/core";
import { ReachPolicy } from "@rein/guard";

const reach = new ReachPolicy({ maxLogicDepth: 5 });
let inFlight: AbortController | undefined;

process.on("SIGINT", () => {
  console.log("SIGINT");
  inFlight?.abort(new CancelledError("interrupted by SIGINT"));
});

const depth = (): number | undefined => currentReach()?.depth.used;

/** Work that never finishes by itself: it rejects with the signal's reason when the run is cancelled. */
function untilCancelled(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
}

class Gateway extends Agent {
  static reach = reach;
  async handle(signal: AbortSignal): Promise<string> {
    console.log(`depth ${depth()}`);
    return new Planner().plan(signal);
  }
  firstEntryDepth(): number | undefined {
    return depth();
  }
}
class Planner extends Agent {
  async plan(signal: AbortSignal): Promise<string> {
    console.log(`depth ${depth()}`);
    return new Researcher().research(signal);
  }
}
class Researcher extends Agent {
  async research(signal: AbortSignal): Promise<string> {
    console.log(`depth ${depth()}`);
    return untilCancelled(signal);
  }
}

async function serve(): Promise<void> {
  // Stands in for a server's listening socket: the process stays up until it is done (a pending promise alone would not).
  const alive = setInterval(() => undefined, 60_000);
  inFlight = new AbortController();
  const ended = await new Gateway().handle(inFlight.signal).then(
    () => "completed",
    (error: Error) => `${error.name}: ${error.message}`,
  );
  inFlight = undefined;
  console.log(`run ended: ${ended}`);
  // A new run in the same process: its first Agent entry.
  console.log(`new run: depth ${new Gateway().firstEntryDepth()}`);
  console.log(`outside any run: ${String(depth())}`);
  clearInterval(alive);
}

void serve();
