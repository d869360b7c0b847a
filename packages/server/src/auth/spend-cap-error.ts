import { ReachError, type SpendRefusal } from "rein";

/**
 * A run of an API key stopped by its spend caps (`createServer({ auth })`):
 * a model request its tokens or cost cap could not hold, reserved before
 * it would have been sent. A `ReachError`, so a run stops with it as with
 * any reach refusal; the server answers 429 `budget_exhausted` with
 * `Retry-After: retryAfterSeconds`.
 * @example
 * ```ts
 * if (SpendCapExceededError.isInstance(error)) setTimeout(retry, error.retryAfterSeconds * 1000);
 * ```
 */
export class SpendCapExceededError extends ReachError {
  static {
    this.defineErrorName("SpendCapExceededError");
  }

  readonly refusal: SpendRefusal;
  readonly retryAfterSeconds: number;

  constructor(refusal: SpendRefusal) {
    super(describeRefusal(refusal));
    this.refusal = refusal;
    this.retryAfterSeconds = refusal.retryAfterSeconds;
  }
}

/** @internal What a refusal says to the client: which cap, the figures, and what to do. */
export function describeRefusal(refusal: SpendRefusal): string {
  const { dimension, used, asked, limit, retryAfterSeconds } = refusal;
  switch (dimension) {
    case "concurrentRuns":
      return `this key has ${used} run(s) in flight, its cap of concurrent runs (${limit}); retry when one ends`;
    case "requestsPerMinute":
      return `this key started ${used} run(s) this minute, its cap (${limit} per minute); retry in ${retryAfterSeconds} s`;
    case "revoked":
      return "this key was revoked while its run was going on";
    case "tokens":
    case "cost": {
      const unit = dimension === "tokens" ? (n: number) => `${n} tokens` : (n: number) => `$${(n / 1e6).toFixed(6)}`;
      const alone = asked > limit ? ` (one request alone needs ${unit(asked)}: more than the cap ever allows; raise the cap)` : "";
      const what = asked === 0 ? `has used its cap of ${unit(limit)} for this period (${unit(used)})` : `cannot reserve ${unit(asked)} more: ${unit(used)} of its cap of ${unit(limit)} are spent or held by requests in flight`;
      return `spend cap: this key ${what}${alone}; retry in ${retryAfterSeconds} s, when the period ends`;
    }
  }
}
