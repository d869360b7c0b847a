import {
  DEFAULT_HOLD_TIMES,
  NO_SPEND,
  endRunStep,
  liveSpend,
  reserveStep,
  settleStep,
  startRunStep,
  type HoldTimes,
  type KeySpend,
  type SpendCaps,
  type SpendHold,
  type SpendRefusal,
  type SpendStep,
  type StoredSpend,
} from "rein";
import { capsOf, checkCreateOptions, newApiKey, recordOf, type ApiKeyRecord, type ApiKeyStore, type CreateApiKeyOptions, type IssuedApiKey, type StoredApiKey } from "./api-key";

/** A key's spend and its holds, as this store keeps them. */
interface Held {
  spend: KeySpend;
  readonly holds: Map<string, SpendHold>;
}

const REVOKED: SpendRefusal = { dimension: "revoked", used: 0, asked: 0, limit: 0, retryAfterSeconds: 1 };

/**
 * API keys kept in memory (hashes only), for tests and single-process demos;
 * spend caps hold within this process only.
 * @example
 * ```ts
 * const keys = new InMemoryApiKeyStore();
 * const { key } = await keys.create({ name: "ci", scopes: ["run", "read"] });
 * const app = createServer({ entries, auth: { keys } });
 * ```
 */
export class InMemoryApiKeyStore implements ApiKeyStore {
  private readonly keys = new Map<string, StoredApiKey>();
  private readonly held = new Map<string, Held>();
  private readonly holdTimes: HoldTimes;

  /** `holdTimes`: how long a reservation and a run slot count when never given back. @default DEFAULT_HOLD_TIMES */
  constructor(options: { readonly holdTimes?: HoldTimes } = {}) {
    this.holdTimes = options.holdTimes ?? DEFAULT_HOLD_TIMES;
  }

  async create(options: CreateApiKeyOptions): Promise<IssuedApiKey> {
    const scopes = checkCreateOptions("InMemoryApiKeyStore.create", options);
    const caps = capsOf("InMemoryApiKeyStore.create", options);
    if ([...this.keys.values()].some((stored) => stored.name === options.name)) throw new TypeError(`InMemoryApiKeyStore.create: a key named '${options.name}' exists (revoke it first)`);
    const { id, key, sha256 } = newApiKey();
    const stored: StoredApiKey = { id, name: options.name, scopes, createdAt: Date.now(), sha256, ...(caps === undefined ? {} : { caps }) };
    this.keys.set(id, stored);
    this.held.set(id, { spend: NO_SPEND, holds: new Map() });
    return { key, record: recordOf(stored) };
  }

  async list(): Promise<readonly ApiKeyRecord[]> {
    return [...this.keys.values()].map(recordOf);
  }

  async revoke(name: string): Promise<boolean> {
    for (const stored of this.keys.values()) {
      if (stored.name === name) {
        this.held.delete(stored.id);
        return this.keys.delete(stored.id);
      }
    }
    return false;
  }

  async find(id: string): Promise<StoredApiKey | undefined> {
    return this.keys.get(id);
  }

  async startRun(id: string, holdId: string, now = Date.now()): Promise<SpendRefusal | undefined> {
    return this.step(id, now, (caps, spend) => startRunStep(caps, spend, holdId, this.holdTimes, now));
  }

  async endRun(id: string, holdId: string, now = Date.now()): Promise<void> {
    this.step(id, now, (_, spend, holds) => ({ spend: endRunStep(spend, take(holds, holdId)) }));
  }

  async reserve(id: string, hold: StoredSpend & { readonly holdId: string }, now = Date.now()): Promise<SpendRefusal | undefined> {
    return this.step(id, now, (caps, spend) => reserveStep(caps, spend, hold.holdId, hold, this.holdTimes, now));
  }

  async settle(id: string, holdId: string, used: StoredSpend, now = Date.now()): Promise<void> {
    this.step(id, now, (_, spend, holds) => ({ spend: settleStep(spend, take(holds, holdId), used) }));
  }

  async spendOf(id: string, now = Date.now()): Promise<KeySpend | undefined> {
    const stored = this.keys.get(id);
    const held = this.held.get(id);
    if (stored === undefined || held === undefined) return undefined;
    return liveSpend(stored.caps ?? {}, held.spend, [...held.holds.values()].filter((hold) => hold.expiresAt <= now), now);
  }

  async close(): Promise<void> {
    this.keys.clear();
    this.held.clear();
  }

  /** Drops the key's expired holds, then applies `step` to its live spend (the refusal, if any, changes nothing else). */
  private step(id: string, now: number, step: (caps: SpendCaps, spend: KeySpend, holds: Map<string, SpendHold>) => SpendStep): SpendRefusal | undefined {
    const stored = this.keys.get(id);
    const held = this.held.get(id);
    if (stored === undefined || held === undefined) return REVOKED;
    const caps = stored.caps ?? {};
    const expired = [...held.holds.values()].filter((hold) => hold.expiresAt <= now);
    for (const hold of expired) held.holds.delete(hold.holdId);
    held.spend = liveSpend(caps, held.spend, expired, now);
    const outcome = step(caps, held.spend, held.holds);
    if ("refusal" in outcome) return outcome.refusal;
    held.spend = outcome.spend;
    if (outcome.hold !== undefined) held.holds.set(outcome.hold.holdId, outcome.hold);
    return undefined;
  }
}

/** Removes and returns the hold `holdId`, if it is still held. */
function take(holds: Map<string, SpendHold>, holdId: string): SpendHold | undefined {
  const hold = holds.get(holdId);
  holds.delete(holdId);
  return hold;
}
