import { NO_SPEND, currentSpend, spendRefusal, type KeySpend, type SpendRefusal, type StoredSpend } from "rein";
import { capsOf, checkCreateOptions, newApiKey, recordOf, type ApiKeyRecord, type ApiKeyStore, type CreateApiKeyOptions, type IssuedApiKey, type StoredApiKey } from "./api-key";

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
  private readonly spend = new Map<string, KeySpend>();

  async create(options: CreateApiKeyOptions): Promise<IssuedApiKey> {
    const scopes = checkCreateOptions("InMemoryApiKeyStore.create", options);
    const caps = capsOf("InMemoryApiKeyStore.create", options);
    if ([...this.keys.values()].some((stored) => stored.name === options.name)) throw new TypeError(`InMemoryApiKeyStore.create: a key named '${options.name}' exists (revoke it first)`);
    const { id, key, sha256 } = newApiKey();
    const stored: StoredApiKey = { id, name: options.name, scopes, createdAt: Date.now(), sha256, ...(caps === undefined ? {} : { caps }) };
    this.keys.set(id, stored);
    this.spend.set(id, NO_SPEND);
    return { key, record: recordOf(stored) };
  }

  async list(): Promise<readonly ApiKeyRecord[]> {
    return [...this.keys.values()].map(recordOf);
  }

  async revoke(name: string): Promise<boolean> {
    for (const stored of this.keys.values()) {
      if (stored.name === name) {
        this.spend.delete(stored.id);
        return this.keys.delete(stored.id);
      }
    }
    return false;
  }

  async find(id: string): Promise<StoredApiKey | undefined> {
    return this.keys.get(id);
  }

  async startRun(id: string, now = Date.now()): Promise<SpendRefusal | undefined> {
    return this.change(id, now, undefined, (spend) => ({ ...spend, activeRuns: spend.activeRuns + 1, minuteCount: spend.minuteCount + 1 }));
  }

  async endRun(id: string): Promise<void> {
    const spend = this.spend.get(id);
    if (spend !== undefined) this.spend.set(id, { ...spend, activeRuns: Math.max(0, spend.activeRuns - 1) });
  }

  async reserve(id: string, amount: StoredSpend, now = Date.now()): Promise<SpendRefusal | undefined> {
    return this.change(id, now, amount, (spend) => ({
      ...spend,
      tokensReserved: spend.tokensReserved + amount.tokens,
      costReservedMicroUsd: spend.costReservedMicroUsd + amount.costMicroUsd,
    }));
  }

  async settle(id: string, reserved: StoredSpend, used: StoredSpend, now = Date.now()): Promise<void> {
    const stored = this.keys.get(id);
    const spend = this.spend.get(id);
    if (stored === undefined || spend === undefined) return;
    const current = currentSpend(stored.caps ?? {}, spend, now);
    this.spend.set(id, {
      ...current,
      tokensSpent: current.tokensSpent + used.tokens,
      costSpentMicroUsd: current.costSpentMicroUsd + used.costMicroUsd,
      tokensReserved: Math.max(0, current.tokensReserved - reserved.tokens),
      costReservedMicroUsd: Math.max(0, current.costReservedMicroUsd - reserved.costMicroUsd),
    });
  }

  async spendOf(id: string, now = Date.now()): Promise<KeySpend | undefined> {
    const stored = this.keys.get(id);
    const spend = this.spend.get(id);
    return stored === undefined || spend === undefined ? undefined : currentSpend(stored.caps ?? {}, spend, now);
  }

  async close(): Promise<void> {
    this.keys.clear();
    this.spend.clear();
  }

  /** Applies `next` to the key's current spend unless its caps refuse `asked` (a run start when undefined). */
  private change(id: string, now: number, asked: StoredSpend | undefined, next: (spend: KeySpend) => KeySpend): SpendRefusal | undefined {
    const stored = this.keys.get(id);
    const spend = this.spend.get(id);
    if (stored === undefined || spend === undefined) return { dimension: "revoked", used: 0, asked: 0, limit: 0, retryAfterSeconds: 1 };
    const current = currentSpend(stored.caps ?? {}, spend, now);
    const refusal = spendRefusal(stored.caps ?? {}, current, asked, now);
    if (refusal === undefined) this.spend.set(id, next(current));
    return refusal;
  }
}
