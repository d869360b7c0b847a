import type { ModelCallOptions, ModelRetry } from "../model/model-provider";
import type { RunEvents } from "./run-events";

/**
 * The per-call options of one model request: the run's signal, and an
 * `onRetry` that reports each retry the provider is about to wait for as a
 * `model-retry` run event and a warning log line, so a request waiting out
 * a rate limit never looks hung.
 * @internal
 */
export function modelCallOptions(signal: AbortSignal | undefined, events: RunEvents, step: number): ModelCallOptions {
  const onRetry = (retry: ModelRetry): void => {
    events.logger.warn(
      { provider: retry.provider, step, attempt: retry.attempt, waitMs: retry.waitMs, status: retry.status },
      `${retry.provider} request ${retry.reason}: retry ${retry.attempt} in ${(retry.waitMs / 1000).toFixed(1)} s` +
        (retry.fromRetryAfter ? " (the server's retry-after)" : ""),
    );
    if (events.listening) events.emit({ type: "model-retry", step, ...retry });
  };
  return signal === undefined ? { onRetry } : { signal, onRetry };
}
