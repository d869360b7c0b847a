import type { Span } from "@opentelemetry/api";
import { ProviderError, costOf, priceOf, tokenCount, type Pricing, type ReachRun } from "@rein/guard";
import type { ModelResponse, Usage } from "../model/model-provider";
import { reachAttributes } from "../telemetry/agent-entry-span";
import { addSpanEvent, SPAN_EVENT } from "../telemetry/tracing";
import type { CallScope } from "../scope/call-scope";
import type { RunEvents } from "./run-events";
import { pricedModel, type RunLedger } from "./run-ledger";
import type { SpendAmount, SpendReservation, SpendReserver } from "./spend-reserver";
import { raceRunLimits } from "./call-limit";

/**
 * What charging a request needs of where it was sent from: the run's
 * ledger, its scope (the reach run and depth) and its events. The request
 * gate's `RequestSite` is one.
 * @internal
 */
export interface ChargeSite {
  readonly ledger: RunLedger;
  readonly scope: CallScope;
  readonly events: RunEvents;
}

/**
 * How far one model request got: whether it was handed to the provider,
 * what its answer used once one came, and what the provider reported of a
 * request that failed after counting it (a stream broken after its start).
 * @internal
 */
export interface RequestProgress {
  sent: boolean;
  used: SpendAmount | undefined;
  reported: SpendAmount | undefined;
}

/**
 * What `usage`, the provider's count for one request, amounts to for the
 * spend caps: its tokens, input and output, and its cost priced with the
 * run's table (undefined when the model has no price there). A count that
 * is negative, NaN or missing is 0, never a refund (an answer's counts come
 * checked: the request gate estimates one a provider left out).
 * @internal
 */
export function spendOf(site: ChargeSite, model: string, response: Pick<ModelResponse, "usage" | "model">): SpendAmount {
  const { usage } = response;
  const price = priceOf(site.ledger.pricing, pricedModel(site.ledger.pricing, model, response.model));
  return { tokens: tokenCount(usage.inputTokens) + tokenCount(usage.outputTokens), costUsd: price === undefined ? undefined : costOf(price, usage) };
}

/**
 * Charges `usage`, what the provider counted for one request, to the run's
 * ledger (and its ancestors') and to the reach budget — the same way: a
 * count that is negative, NaN or missing is 0 — then reports the reach status.
 * @internal
 */
export function chargeUsage(site: ChargeSite, model: string, response: Pick<ModelResponse, "usage" | "model">, span: Span | undefined): void {
  site.ledger.chargeRequest(model, response.model, response.usage);
  const reach = site.scope.reach;
  if (reach === undefined) return;
  const pricing = reachPricing(site);
  const price = priceOf(pricing, pricedModel(pricing, model, response.model));
  reach.addUsage(tokenCount(response.usage.inputTokens) + tokenCount(response.usage.outputTokens), price === undefined ? 0 : costOf(price, response.usage));
  const depth = site.scope.agentDepth ?? 0;
  if (site.events.listening) site.events.emit({ type: "reach-status", ...reach.status(depth) });
  addSpanEvent(span, SPAN_EVENT.reachStatus, () => reachAttributes(reach, depth));
}

/** Errors whose reported usage was charged: the same error failing an enclosing request (a provider that asks an agent) is not charged again. */
const charged = new WeakSet<object>();

/**
 * Charges what a failed request's provider reported before failing (a
 * `ProviderError`'s `reportedUsage`: the input an Anthropic stream's
 * `message_start` counted, say) as an answer's usage is charged, once per
 * error; returns its amount for the spend caps, or undefined when nothing
 * was reported (a `reportedUsage` that is not an object, from a custom
 * provider, reports nothing) or it was charged already.
 * @internal
 */
export function chargeReportedUsage(site: ChargeSite, model: string, error: unknown, span: Span | undefined): SpendAmount | undefined {
  const reported: unknown = ProviderError.isInstance(error) ? error.reportedUsage : undefined;
  if (typeof reported !== "object" || reported === null || charged.has(error as object)) return undefined;
  charged.add(error as object);
  const usage = reported as Usage;
  chargeUsage(site, model, { usage }, span);
  return spendOf(site, model, { usage });
}

/**
 * What a request that ended in an error pays to the spend caps: its
 * answer's usage when one came (something after the answer failed);
 * nothing when it was never sent (refused or cancelled before the provider
 * was called); when it was sent and no answer came, the whole reservation,
 * or what the provider reported if that is more — the provider had the
 * request and may bill its input and whatever it wrote before a cancel or
 * an error, which nothing here can see, so the cap errs towards charging,
 * never towards letting a failed request go free or cheap.
 * @internal
 */
export function unanswered(reservation: SpendReservation, reserved: SpendAmount, progress: RequestProgress): Promise<void> {
  if (progress.used !== undefined) return reservation.settle(progress.used);
  if (!progress.sent) return reservation.release();
  const reported = progress.reported;
  if (reported === undefined) return reservation.settle(reserved);
  const costUsd = reserved.costUsd === undefined ? reported.costUsd : Math.max(reserved.costUsd, reported.costUsd ?? 0);
  return reservation.settle({ tokens: Math.max(reserved.tokens, reported.tokens), costUsd });
}

/** The prices reach charges with: the policy's own table, else the run's. @internal */
export function reachPricing(site: ChargeSite): Pricing | undefined {
  return site.scope.reach?.policy.limits.pricing ?? site.ledger.pricing;
}

/**
 * Reserves `amount` with `spend`, waiting only as long as the run may: a
 * slow key store cannot hold the run past a cancel or the reach deadline,
 * which reject with their own error. A reservation that arrives after the
 * run stopped waiting is released at once (a failed release leaves the
 * hold to expire: never an overshoot).
 * @internal
 */
export async function reserveWithin(spend: SpendReserver, amount: SpendAmount, signal: AbortSignal | undefined, reach: ReachRun | undefined): Promise<SpendReservation> {
  const pending = spend.reserve(amount);
  try {
    return await raceRunLimits(pending, signal, reach);
  } catch (error) {
    pending.then((held) => held.release(), () => undefined).catch(() => undefined);
    throw error;
  }
}
