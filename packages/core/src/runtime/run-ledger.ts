import type { Usage } from "../model/model-provider";
import { costOf, tokenCount, priceOf, type Pricing } from "@rein/guard";
import type { RunUsage } from "./run-result";
import type { SpendReserver } from "./spend-reserver";

/**
 * What one run used: its model requests (usage, cost), tool calls and
 * steps. Every run — a top-level `ask`, a turn, a sub-agent's run inside a
 * tool — has its own ledger, linked to the ledger of the run it is nested
 * in. A charge is written once, here, and rolls up to every ancestor, so a
 * run reads its own figures directly: two runs going on at once under one
 * parent never see each other's requests, and the parent sees both.
 * @internal
 */
export class RunLedger {
  inputTokens = 0;
  outputTokens = 0;
  cachedInputTokens = 0;
  cacheCreationInputTokens = 0;
  costUsd = 0;
  unpricedRequests = 0;
  requests = 0;
  toolCalls = 0;

  constructor(
    /** The ledger of the run this one is nested in, charged with everything charged here. */
    readonly parent: RunLedger | undefined,
    /** The pricing table of this run's runtime, else the nearest ancestor's: it prices this run's requests. */
    readonly pricing: Pricing | undefined = parent?.pricing,
    /** Where each model request of this run reserves its spend before it is sent (a key's spend caps): this run's own, else the nearest ancestor's. */
    readonly spend: SpendReserver | undefined = parent?.spend,
  ) {}

  /**
   * Charges one request the provider counted (answered, or failed after
   * reporting usage) to this run and every run it is nested in, priced
   * with this run's table (the model asked for, else the one that
   * answered; a model the table does not list is counted in
   * `unpricedRequests`). Returns its cost in US dollars (0 when unpriced).
   */
  chargeRequest(requested: string, answered: string | undefined, usage: Usage): number {
    const input = tokenCount(usage.inputTokens);
    const output = tokenCount(usage.outputTokens);
    const cached = tokenCount(usage.cachedInputTokens);
    const created = tokenCount(usage.cacheCreationInputTokens);
    const price = priceOf(this.pricing, pricedModel(this.pricing, requested, answered));
    const cost = price === undefined ? 0 : costOf(price, usage);
    const unpriced = this.pricing !== undefined && price === undefined ? 1 : 0;
    for (let ledger: RunLedger | undefined = this; ledger !== undefined; ledger = ledger.parent) {
      ledger.requests++;
      ledger.inputTokens += input;
      ledger.outputTokens += output;
      ledger.cachedInputTokens += cached;
      ledger.cacheCreationInputTokens += created;
      ledger.costUsd += cost;
      ledger.unpricedRequests += unpriced;
    }
    return cost;
  }

  /** Counts one tool call (blocked and refused ones included) to this run and its ancestors. */
  chargeToolCall(): void {
    for (let ledger: RunLedger | undefined = this; ledger !== undefined; ledger = ledger.parent) ledger.toolCalls++;
  }

  /** This run's usage, as `RunResult.usage` reports it (`costUsd` when the run is priced). */
  usage(): RunUsage {
    const usage = {
      inputTokens: this.inputTokens,
      outputTokens: this.outputTokens,
      cachedInputTokens: this.cachedInputTokens,
      cacheCreationInputTokens: this.cacheCreationInputTokens,
    };
    if (this.pricing === undefined) return usage;
    return { ...usage, costUsd: this.costUsd, unpricedRequests: this.unpricedRequests };
  }
}

/** The model a pricing table knows: the one asked for, else the one that answered. @internal */
export function pricedModel(pricing: Pricing | undefined, requested: string, answered: string | undefined): string {
  if (pricing === undefined || answered === undefined || Object.prototype.hasOwnProperty.call(pricing, requested)) return requested;
  return Object.prototype.hasOwnProperty.call(pricing, answered) ? answered : requested;
}
