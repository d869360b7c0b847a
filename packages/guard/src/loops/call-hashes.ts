import { hashToolCallJson } from "./stable-hash";
import { stableStringify } from "./stable-json";

/** Distinct hashes kept interned before the table starts over (far above any window). */
const INTERN_LIMIT = 4096;
/** Argument hashes cached per tool, and tools cached, before starting over (far above the patterns of one window). */
const ARGS_CACHE_LIMIT = 256;
/** Arguments whose stable JSON is longer are hashed without caching, so the cache never holds large payloads. */
const ARGS_CACHE_MAX_JSON = 2048;

/**
 * The hashes one {@link ToolLoopDetector} compares: argument hashes (cached,
 * always checked against content) and one interned string per distinct hash.
 * @internal
 */
export class CallHashes {
  private readonly interned = new Map<string, string>();
  /** The last flat arguments hashed, with their values (see argsHashOf). */
  private lastArgs: FlatArguments | undefined;
  /** Argument hashes by tool name, then by the arguments' stable JSON (see argsHashOf). */
  private readonly argsHashes = new Map<string, Map<string, string>>();

  /**
   * The arguments' hash, from their content every time: a caller may mutate
   * one params object between calls, so object identity alone proves
   * nothing. Two caches keep it cheap, both checked against content:
   *
   * - the last flat arguments (a plain object of primitives, as most tool
   *   arguments are) with a copy of their values: `detect`, `recordCall` and
   *   `recordOutcome` of one call usually pass the same object, and comparing
   *   its values costs far less than writing its JSON;
   * - hashes by tool name and stable JSON, which skips the sha256 of a call
   *   seen before (a hit is a content match by construction).
   */
  argsHashOf(toolName: string, params: unknown): string {
    const last = this.lastArgs;
    if (last !== undefined && last.params === params && last.toolName === toolName && hasValues(params, last)) {
      return last.argsHash;
    }
    const argsHash = this.argsHashOfJson(toolName, stableStringify(params));
    this.lastArgs = flatArguments(params, toolName, argsHash);
    return argsHash;
  }

  private argsHashOfJson(toolName: string, json: string): string {
    if (json.length > ARGS_CACHE_MAX_JSON) return this.intern(hashToolCallJson(toolName, json));
    let byJson = this.argsHashes.get(toolName);
    const known = byJson?.get(json);
    if (known !== undefined) return known;
    const argsHash = this.intern(hashToolCallJson(toolName, json));
    if (byJson === undefined || byJson.size >= ARGS_CACHE_LIMIT) {
      if (this.argsHashes.size >= ARGS_CACHE_LIMIT) this.argsHashes.clear();
      byJson = new Map();
      this.argsHashes.set(toolName, byJson);
    }
    byJson.set(json, argsHash);
    return argsHash;
  }

  /**
   * One string object per distinct hash: the window scans compare hashes on
   * every call, and equal objects compare by identity instead of 70 characters.
   */
  intern(hash: string): string {
    const known = this.interned.get(hash);
    if (known !== undefined) return known;
    if (this.interned.size >= INTERN_LIMIT) this.interned.clear();
    this.interned.set(hash, hash);
    return hash;
  }
}

/** Arguments made of a plain object's own primitive values, and their hash. */
interface FlatArguments {
  readonly params: object;
  readonly toolName: string;
  readonly keys: readonly string[];
  readonly values: readonly unknown[];
  readonly argsHash: string;
}

/** A snapshot of `params` when it is a plain object of primitives (nothing nested that could change unseen), else undefined. */
function flatArguments(params: unknown, toolName: string, argsHash: string): FlatArguments | undefined {
  if (typeof params !== "object" || params === null) return undefined;
  const prototype: unknown = Object.getPrototypeOf(params);
  if (prototype !== Object.prototype && prototype !== null) return undefined;
  const record = params as Record<string, unknown>;
  const keys = Object.keys(record);
  const values = new Array<unknown>(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const value = record[keys[i]];
    if ((typeof value === "object" && value !== null) || typeof value === "function") return undefined;
    values[i] = value;
  }
  return { params, toolName, keys, values, argsHash };
}

/** Whether `params` still holds exactly the snapshot's keys (in order) and values: then its JSON, and hash, are the same. */
function hasValues(params: unknown, snapshot: FlatArguments): boolean {
  const record = params as Record<string, unknown>;
  const prototype: unknown = Object.getPrototypeOf(record);
  if (prototype !== Object.prototype && prototype !== null) return false;
  const keys = Object.keys(record);
  const { keys: knownKeys, values } = snapshot;
  if (keys.length !== knownKeys.length) return false;
  for (let i = 0; i < keys.length; i++) {
    if (keys[i] !== knownKeys[i] || !Object.is(record[keys[i]], values[i])) return false;
  }
  return true;
}
