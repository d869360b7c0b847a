import { checkCreateOptions, newApiKey, recordOf, type ApiKeyRecord, type ApiKeyStore, type CreateApiKeyOptions, type IssuedApiKey, type StoredApiKey } from "./api-key";

/**
 * API keys kept in memory (hashes only), for tests and single-process demos.
 * @example
 * ```ts
 * const keys = new InMemoryApiKeyStore();
 * const { key } = await keys.create({ name: "ci", scopes: ["run", "read"] });
 * const app = createServer({ entries, auth: { keys } });
 * ```
 */
export class InMemoryApiKeyStore implements ApiKeyStore {
  private readonly keys = new Map<string, StoredApiKey>();

  async create(options: CreateApiKeyOptions): Promise<IssuedApiKey> {
    const scopes = checkCreateOptions("InMemoryApiKeyStore.create", options);
    if ([...this.keys.values()].some((stored) => stored.name === options.name)) throw new TypeError(`InMemoryApiKeyStore.create: a key named '${options.name}' exists (revoke it first)`);
    const { id, key, sha256 } = newApiKey();
    const stored: StoredApiKey = { id, name: options.name, scopes, createdAt: Date.now(), sha256 };
    this.keys.set(id, stored);
    return { key, record: recordOf(stored) };
  }

  async list(): Promise<readonly ApiKeyRecord[]> {
    return [...this.keys.values()].map(recordOf);
  }

  async revoke(name: string): Promise<boolean> {
    for (const stored of this.keys.values()) {
      if (stored.name === name) return this.keys.delete(stored.id);
    }
    return false;
  }

  async find(id: string): Promise<StoredApiKey | undefined> {
    return this.keys.get(id);
  }

  async close(): Promise<void> {
    this.keys.clear();
  }
}
