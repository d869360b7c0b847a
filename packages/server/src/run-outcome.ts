import type { Context as HonoContext } from "hono";
import { CancelledError, ProviderError, ReachError, type SessionStoreLike } from "rein";
import { SpendCapExceededError } from "./auth/spend-cap-error";
import { isStoreFault } from "./store-fault";
import { storeReads } from "./store-reads";
import { whenAborted } from "./when-aborted";

/** @internal The error type of a failed run: a key's spend cap (429), a reach refusal (403), a provider failure (502), a store fault (503), or anything else (200 with the error). */
export function errorTypeOf(error: Error): "budget_exhausted" | "reach_exceeded" | "provider_error" | "store_unavailable" | "run_error" {
  if (SpendCapExceededError.isInstance(error)) return "budget_exhausted";
  if (ReachError.isInstance(error)) return "reach_exceeded";
  if (ProviderError.isInstance(error)) return "provider_error";
  return isStoreFault(error) ? "store_unavailable" : "run_error";
}

/**
 * Cancels `controller` when the client of `c` hangs up before its answer
 * (`@hono/node-server` aborts the request's signal when the connection
 * closes first); returns the function that stops listening.
 */
export function onHangUp(c: HonoContext, controller: AbortController): () => void {
  const signal = c.req.raw.signal;
  const cancel = () => controller.abort(new CancelledError("the client disconnected"));
  return whenAborted(signal, cancel);
}

/** @internal The stored session's head node, when the store can say (read on its pool when it has one: {@link storeReads}). */
export async function headOf(store: SessionStoreLike, sessionId: string): Promise<{ headId?: string }> {
  try {
    const head = await storeReads(store).head(sessionId);
    return head === null ? {} : { headId: head };
  } catch {
    return {};
  }
}
