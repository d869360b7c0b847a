import { randomUUID } from "node:crypto";
import { ReachError, microUsd, type SpendAmount, type SpendCaps, type SpendRefusal, type SpendReserver, type StoredSpend } from "rein";
import { RequestError } from "../http-error";
import { STORE_UNAVAILABLE } from "../store-fault";
import type { ApiKeyStore } from "./api-key";
import type { Caller } from "./caller";
import { SpendCapExceededError, describeRefusal } from "./spend-cap-error";

/**
 * @internal One run of a capped key, started: `spend` (when the key caps
 * tokens or cost) reserves each of its model requests in the key store;
 * `end` gives its run slot back.
 */
export interface KeyRun {
  readonly spend: SpendReserver | undefined;
  end(): Promise<void>;
}

/**
 * @internal Starts a run of `caller` under its key's caps: undefined for a
 * key without caps (nothing asked of the store), else a {@link KeyRun}. A
 * cap that refuses the start (runs at once, runs this minute, tokens or
 * cost all spent) is a 429 `budget_exhausted` with `Retry-After`; a key
 * store that fails, a 503 `store_unavailable` (the fault to `report`).
 */
export async function startKeyRun(keys: ApiKeyStore | undefined, caller: Caller, report: (error: unknown) => void, slot: string = randomUUID()): Promise<KeyRun | undefined> {
  const { keyId, caps } = caller;
  if (keys === undefined || keyId === undefined || caps === undefined) return undefined;
  const refusal = await keys.startRun(keyId, slot).catch((error: unknown) => {
    // What the store's fault says (hosts, files) goes to the report, never to the client.
    report(error);
    throw new RequestError("store_unavailable", STORE_UNAVAILABLE);
  });
  if (refusal !== undefined) throw new RequestError("budget_exhausted", describeRefusal(refusal), refusal.retryAfterSeconds);
  return heldKeyRun(keys, keyId, caps, slot);
}

/**
 * @internal The run of key `keyId` whose slot `slot` was taken by
 * {@link startKeyRun} in another process (a background run: the server took
 * it when it queued the run, the worker executing it ends it): each model
 * request reserved under the key's caps as they are now. A key revoked
 * since is a {@link SpendCapExceededError} (its runs do not execute); a key
 * without caps now is a run with no reserver.
 */
export async function resumeKeyRun(keys: ApiKeyStore, keyId: string, slot: string): Promise<KeyRun> {
  const stored = await keys.find(keyId);
  if (stored === undefined) throw new SpendCapExceededError(REVOKED);
  return heldKeyRun(keys, keyId, stored.caps ?? {}, slot);
}

/** The refusal of a run whose key was revoked after the run was queued. */
const REVOKED: SpendRefusal = { dimension: "revoked", used: 0, asked: 0, limit: 0, retryAfterSeconds: 1 };

/** A run of key `keyId` holding slot `slot` (ended once, by {@link KeyRun.end}). */
function heldKeyRun(keys: ApiKeyStore, keyId: string, caps: SpendCaps, slot: string): KeyRun {
  let ended = false;
  return {
    spend: caps.tokens === undefined && caps.costUsd === undefined ? undefined : keySpend(keys, keyId, caps.costUsd !== undefined),
    async end() {
      if (ended) return;
      ended = true;
      await keys.endRun(keyId, slot);
    },
  };
}

/** The reserver of key `keyId`'s runs: each reservation is one atomic step of the key store. */
function keySpend(keys: ApiKeyStore, keyId: string, capsCost: boolean): SpendReserver {
  const stored = (amount: SpendAmount): StoredSpend => ({ tokens: Math.ceil(amount.tokens), costMicroUsd: amount.costUsd === undefined ? 0 : microUsd(amount.costUsd) });
  return {
    async reserve(estimate) {
      if (capsCost && estimate.costUsd === undefined) {
        throw new ReachError(
          "spend cap: this key caps cost, and the request's model has no price in the runtime's pricing table, so its cost cannot be held: give the Runtime a pricing entry for the model",
        );
      }
      const holdId = randomUUID();
      const refusal = await keys.reserve(keyId, { ...stored(estimate), holdId });
      if (refusal !== undefined) throw new SpendCapExceededError(refusal);
      return {
        settle: (used) => keys.settle(keyId, holdId, stored(used)),
        release: () => keys.settle(keyId, holdId, { tokens: 0, costMicroUsd: 0 }),
      };
    },
  };
}
