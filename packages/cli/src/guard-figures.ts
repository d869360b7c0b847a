/**
 * The guard figures of a running `rein run` child, beside its reach: what is
 * actually approaching a limit in a runaway. Reach depth counts Agent
 * entries, so an agent that calls itself as a tool stays at depth 1 while
 * its recursion climbs to the ceiling; these figures show that climb, the
 * loop detector's warnings and the model requests used of `maxSteps`.
 * @internal
 */
import { currentChain, MAX_AGENTIC_RECURSION_DEPTH, type InvocationInfo, type RunEvent } from "rein";

/** The guard figures the child publishes with each status message. */
export interface GuardFigures {
  /** The function nested deepest on the running call chain, and its recursion ceiling. */
  readonly recursion: { readonly used: number; readonly limit: number; readonly name: string };
  /** Loop-detection warnings (the model was told) and blocks (the call did not run) so far. */
  readonly loops: { readonly warnings: number; readonly blocks: number };
  /** Model requests made so far (the run's step count), against the entry's `maxSteps` (`null`: unknown). */
  readonly steps: { readonly used: number; readonly limit: number | null };
}

/** The deepest same-function nesting of `chain`, with that function's name. */
export function deepestRecursion(chain: readonly { readonly key: string; readonly name: string }[]): { used: number; name: string } {
  const counts = new Map<string, number>();
  let used = 0;
  let name = "";
  for (const frame of chain) {
    const count = (counts.get(frame.key) ?? 0) + 1;
    counts.set(frame.key, count);
    if (count > used) {
      used = count;
      name = frame.name;
    }
  }
  return { used, name };
}

/**
 * Collects {@link GuardFigures}: `observeCall` at every scoped call (a
 * pre-invocation hook, inside the call), `observeEvent` for every run event
 * (a run listener around the entry), `figures` inside the innermost call's
 * context when the status is published (the chain read there is live:
 * finished frames no longer count).
 */
export class GuardFigureCollector {
  #recursionLimit = MAX_AGENTIC_RECURSION_DEPTH;
  #warnings = 0;
  #blocks = 0;
  #steps = 0;
  #stepLimit: number | null;

  /** @param stepLimit - the entry agent's `runtime.maxSteps`, when known. */
  constructor(stepLimit?: number) {
    this.#stepLimit = stepLimit !== undefined && Number.isFinite(stepLimit) ? stepLimit : null;
  }

  /** Sets the step limit once the entry agent (and its runtime) exists. */
  setStepLimit(limit: number | undefined): void {
    if (limit !== undefined && Number.isFinite(limit)) this.#stepLimit = limit;
  }

  /** At a scoped call: the ceiling that applies is the calling agent's (`recursionLimit`), else the default 5. */
  observeCall(call: InvocationInfo): void {
    const limit = (call.target as { readonly scopeLimits?: { readonly recursionLimit?: number } } | undefined)?.scopeLimits?.recursionLimit;
    this.#recursionLimit = limit ?? MAX_AGENTIC_RECURSION_DEPTH;
  }

  /** For every run event: loop warnings and blocks, and the step count of each model request. */
  observeEvent(event: RunEvent): void {
    if (event.type === "loop-warning") this.#warnings++;
    else if (event.type === "loop-block") this.#blocks++;
    else if (event.type === "model-request" && event.step > this.#steps) this.#steps = event.step;
  }

  /** The figures now; call inside the innermost call's context, so the chain is the running one. */
  figures(): GuardFigures {
    const { used, name } = deepestRecursion(currentChain());
    return {
      recursion: { used, limit: this.#recursionLimit, name },
      loops: { warnings: this.#warnings, blocks: this.#blocks },
      steps: { used: this.#steps, limit: this.#stepLimit },
    };
  }
}
