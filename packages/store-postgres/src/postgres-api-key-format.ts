import { createHash, randomBytes } from "node:crypto";
import { capsAnything, checkSpendCaps, type SpendCaps } from "@rein/guard";

// The key format and the create() checks of @rein/server's api-key.ts, which this package cannot
// import (store-postgres sits below the server). server's auth tests run its verifyApiKey and the
// ApiKeyStore contract against PostgresApiKeyStore, so the two cannot drift apart unnoticed.

/** The scopes a key may hold, in order (`@rein/server`'s `API_KEY_SCOPES`). @internal */
export const KEY_SCOPES = ["run", "read", "mint", "admin"] as const;

/** A scope of {@link KEY_SCOPES}. @internal */
export type KeyScope = (typeof KEY_SCOPES)[number];

const NAME = /^[A-Za-z0-9._-]{1,64}$/;

/** `create`'s options checked (a `TypeError` naming the option): the scopes in order without duplicates, and the caps (undefined when none). @internal */
export function checkKeyOptions(options: { name: string; scopes: readonly string[]; caps?: SpendCaps }): { scopes: KeyScope[]; caps: SpendCaps | undefined } {
  const owner = "PostgresApiKeyStore.create";
  if (typeof options !== "object" || options === null) throw new TypeError(`${owner}: options must be { name, scopes }`);
  if (typeof options.name !== "string" || !NAME.test(options.name)) throw new TypeError(`${owner}: name must be 1-64 characters of A-Z a-z 0-9 . _ -`);
  if (!Array.isArray(options.scopes) || options.scopes.length === 0 || options.scopes.some((scope) => !(KEY_SCOPES as readonly string[]).includes(scope))) {
    throw new TypeError(`${owner}: scopes must be a non-empty list of ${KEY_SCOPES.join(", ")}`);
  }
  const caps = checkSpendCaps(owner, options.caps);
  return { scopes: KEY_SCOPES.filter((scope) => options.scopes.includes(scope)), caps: capsAnything(caps) ? caps : undefined };
}

/** A new key (`rein_<16 hex id>_<43 base64url characters: 256 random bits>`), its id and the SHA-256 of it (hex). @internal */
export function mintKey(): { id: string; key: string; sha256: string } {
  const id = randomBytes(8).toString("hex");
  const key = `rein_${id}_${randomBytes(32).toString("base64url")}`;
  return { id, key, sha256: createHash("sha256").update(key, "utf8").digest("hex") };
}
