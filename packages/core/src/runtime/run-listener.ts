import * as guard from "@rein/guard";
import { Context } from "../context/context";
import { currentScope, deriveScope } from "../scope/call-scope";
import { CancellationRegion, joinSignals } from "./cancellation";
import { RunEvents } from "./run-events";
import { RunLedger } from "./run-ledger";
import type { SpendReserver } from "./spend-reserver";
import { SILENT_LOGGER } from "./silent-logger";
import type { RunEventListener } from "./runtime-events";


/**
 * Runs `fn` (sync or async) so that every run inside it — Agent calls, their
 * model-tool loops, nested agents — also reports to `listener`, and is
 * cancelled by `signal`: what a server does for one request, whatever the
 * entry it calls. Events reach the listener once, stamped with the agent
 * that produced them, besides every `onEvent` of the runtimes involved.
 * With `spend`, every model request of those runs reserves its estimated
 * spend there before it is sent and settles it after ({@link SpendReserver}).
 * @example
 * ```ts
 * const controller = new AbortController();
 * const answer = await withRunListener((event) => sse.write(event), () => new Researcher().research(task), { signal: controller.signal });
 * ```
 */
export function withRunListener<R>(listener: RunEventListener, fn: () => R, options: { readonly signal?: AbortSignal; readonly spend?: SpendReserver } = {}): R {
  if (typeof listener !== "function") throw new TypeError("withRunListener(listener, fn): listener must be a function (event) => void");
  if (typeof fn !== "function") throw new TypeError("withRunListener(listener, fn): fn must be a function");
  if (options.spend !== undefined && typeof options.spend?.reserve !== "function") {
    throw new TypeError("withRunListener(listener, fn, { spend }): spend must be a SpendReserver (an object with reserve(estimate))");
  }
  const parent = currentScope();
  const signal = joinSignals(options.signal, parent?.signal);
  const base = parent?.events ?? RunEvents.root(SILENT_LOGGER, undefined, "");
  // A signal of its own: the calls under it are cancelled (their nodes closed) when it fires.
  const ownRegion = signal !== undefined && signal !== parent?.signal ? new CancellationRegion(signal) : undefined;
  const region = ownRegion ?? parent?.region;
  // Everything else of the caller's scope goes on (its agent, reach, run ledger, trace): only where events go and what cancels change.
  const scope = deriveScope(parent);
  scope.context = parent?.context ?? new Context();
  scope.events = base.withListener(listener, () => undefined);
  scope.signal = signal;
  scope.region = region;
  // The runs inside charge a ledger that carries the reserver (and rolls up to the caller's, if any).
  if (options.spend !== undefined) scope.ledger = new RunLedger(parent?.ledger, parent?.ledger?.pricing, options.spend);
  if (ownRegion === undefined) return guard.withFrameData(scope, fn);
  let result: R;
  try {
    result = guard.withFrameData(scope, fn);
  } catch (error) {
    ownRegion.dispose();
    throw error;
  }
  if (result instanceof Promise) return result.finally(() => ownRegion.dispose()) as R;
  ownRegion.dispose();
  return result;
}
