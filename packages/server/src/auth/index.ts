export { API_KEY_SCOPES, verifyApiKey } from "./api-key";
export type { ApiKeyScope, ApiKeyRecord, StoredApiKey, IssuedApiKey, ApiKeyStore, CreateApiKeyOptions } from "./api-key";
export { InMemoryApiKeyStore } from "./in-memory-api-key-store";
export { SqliteApiKeyStore } from "./sqlite-api-key-store";
export type { SqliteApiKeyStoreOptions } from "./sqlite-api-key-store";
export { SpendCapExceededError } from "./spend-cap-error";
