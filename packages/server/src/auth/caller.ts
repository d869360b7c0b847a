import type { SpendCaps } from "rein";
import { RequestError } from "../http-error";
import { verifyApiKey, type ApiKeyScope, type ApiKeyStore } from "./api-key";

/**
 * Options of `createServer({ auth })`: API keys checked on every route but
 * `GET /healthz`.
 * @example
 * ```ts
 * createServer({ entries, auth: { keys: new SqliteApiKeyStore({ path: ".rein/sessions.db" }) } });
 * ```
 */
export interface AuthOptions {
  /** Where the keys' hashes are kept. */
  readonly keys: ApiKeyStore;
}

/**
 * @internal Who is calling: a key (its id owns what it creates), or, on a
 * server without auth, anyone (`owner` "", which owns everything a client
 * made and nothing the server runs itself).
 */
export interface Caller {
  /** "" without auth, else `k.<key id>`: the prefix of the caller's sessions and the owner of its runs. */
  readonly owner: string;
  /** Sees and steers every key's runs and sessions (the `admin` scope; everyone on a server without auth). */
  readonly seesAll: boolean;
  /** May be given a root budget when a policy secret is set (the `mint` or `admin` scope). */
  readonly mayMint: boolean;
  has(scope: ApiKeyScope): boolean;
  /** The key's id (absent without auth). */
  readonly keyId?: string;
  /** The key's spend caps (absent: none). */
  readonly caps?: SpendCaps;
}

/** @internal The caller of a server without auth. */
export const ANYONE: Caller = { owner: "", seesAll: true, mayMint: false, has: () => true };

const BEARER = /^Bearer ([\x21-\x7e]{1,256})$/;

/**
 * @internal The caller a request's `Authorization` header names, allowed
 * `scope`: 401 `unauthorized` without a valid key (the key is compared in
 * constant time by {@link verifyApiKey}), 403 `forbidden` without the scope.
 */
export async function authenticate(auth: AuthOptions | undefined, authorization: string | undefined, scope: ApiKeyScope): Promise<Caller> {
  if (auth === undefined) return ANYONE;
  const token = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
  const record = token === undefined ? undefined : await verifyApiKey(auth.keys, token);
  if (record === undefined) throw new RequestError("unauthorized", "send a valid API key: Authorization: Bearer <key> (rein keys create prints one)");
  const admin = record.scopes.includes("admin");
  const caller: Caller = {
    owner: `k.${record.id}`,
    seesAll: admin,
    mayMint: admin || record.scopes.includes("mint"),
    has: (wanted) => admin || record.scopes.includes(wanted),
    keyId: record.id,
    ...(record.caps === undefined ? {} : { caps: record.caps }),
  };
  if (!caller.has(scope)) throw new RequestError("forbidden", `this key lacks the '${scope}' scope (it has: ${record.scopes.join(", ")})`);
  return caller;
}
