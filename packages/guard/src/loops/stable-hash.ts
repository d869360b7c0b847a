import * as crypto from "node:crypto";
import { createHash, type Hash } from "node:crypto";
import { DEFAULT_LOOP_DETECTION_CONFIG } from "./loop-detection-config";
import { stableStringify } from "./stable-json";

/**
 * The pattern hash of a tool call: `${toolName}:` followed by the sha256 hex
 * of a stable JSON of `params` (sorted keys, cycle-safe; bigint, binary data,
 * errors, Map/Set and non-finite numbers written distinctly). Calls with equal
 * arguments in any key order share it.
 *
 * @example
 * ```ts
 * hashToolCall("search", { q: "rein", page: 1 }) === hashToolCall("search", { page: 1, q: "rein" }); // true
 * ```
 */
export function hashToolCall(toolName: string, params: unknown): string {
  return hashToolCallJson(toolName, stableStringify(params));
}

/**
 * {@link hashToolCall} from the arguments' stable JSON (`stableStringify`)
 * already written: internal to the loops folder, for the detector's cache.
 */
export function hashToolCallJson(toolName: string, json: string): string {
  return `${toolName}:${sha256Hex(json)}`;
}

// The one-shot `crypto.hash` (Node 20.12+) skips the Hash object, about half
// the cost for the small strings arguments make.
const sha256Hex: (text: string) => string =
  typeof crypto.hash === "function"
    ? (text) => crypto.hash("sha256", text, "hex")
    : (text) => createHash("sha256").update(text).digest("hex");

/** What a tool call produced: a result, or the error it failed with. */
export interface ToolOutcome {
  /** The value the tool returned. */
  result?: unknown;
  /** What the tool threw; when not `undefined` the outcome is a failure. */
  error?: unknown;
}

/** Options of {@link hashOutcome}. */
export interface HashOutcomeOptions {
  /**
   * Object keys skipped at any depth of the result.
   * @default DEFAULT_LOOP_DETECTION_CONFIG.volatileKeys
   */
  volatileKeys?: ReadonlySet<string> | readonly string[];
}

const DEFAULT_VOLATILE_KEYS: ReadonlySet<string> = new Set(DEFAULT_LOOP_DETECTION_CONFIG.volatileKeys);

/**
 * The sha256 hex of a tool outcome, for telling "same result again" from
 * progress. Keys listed in `volatileKeys` are dropped at every depth, so a new
 * pid, duration or message id does not look like progress; an `Error` hashes
 * by its name and message only; a failure never hashes like a result.
 *
 * The result is hashed in one streaming pass without building a JSON copy:
 * long strings go to the hash as they are, so the cost stays close to a plain
 * sha256 of the result's bytes.
 *
 * @example
 * ```ts
 * hashOutcome({ result: { exitCode: 0, pid: 41 } }) === hashOutcome({ result: { exitCode: 0, pid: 42 } }); // true
 * ```
 */
export function hashOutcome(outcome: ToolOutcome, options: HashOutcomeOptions = {}): string {
  const { result, error } = outcome;
  // JSON text (an MCP tool's result, a tool returning JSON.stringify(...)) is hashed as the value it holds, so its
  // volatile keys are dropped too; under its own tag, so it never hashes like the plain string.
  const json = error === undefined && typeof result === "string" ? jsonTextValue(result) : undefined;
  // The encoder's output for a plain string result, without the encoder.
  if (json === undefined && error === undefined && typeof result === "string") {
    return result.length < DIRECT_STRING_LENGTH
      ? sha256Hex(`Rs${result.length}:${result}`)
      : createHash("sha256").update(`Rs${result.length}:`).update(result).digest("hex");
  }
  const keys = options.volatileKeys;
  const volatileKeys = keys === undefined ? DEFAULT_VOLATILE_KEYS : keys instanceof Set ? keys : new Set(keys);
  const encoder = new OutcomeEncoder(volatileKeys as ReadonlySet<string>);
  if (error !== undefined) {
    encoder.token("E");
    encoder.value(error);
  } else if (json !== undefined) {
    encoder.token("J");
    encoder.value(json);
  } else {
    encoder.token("R");
    encoder.value(result);
  }
  return encoder.digest();
}

/** JSON text longer than this is hashed as text: parsing it would cost more than the result is worth comparing. */
const JSON_TEXT_LIMIT = 64 * 1024;

/** The object or array a JSON text holds (`{…}` or `[…]`, up to {@link JSON_TEXT_LIMIT}), else undefined. */
function jsonTextValue(text: string): object | undefined {
  if (text.length > JSON_TEXT_LIMIT || !/^\s*[[{]/.test(text)) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Strings this long go to a streaming hash as they are: concatenating them
 * into the encoding would make the hash flatten (copy) them first. Below it,
 * the copy costs less than creating a Hash object and feeding it in pieces
 * (measured with bench/loop-detector.ts: 10 KB results 1.58× → 1.53× raw sha256).
 */
const DIRECT_STRING_LENGTH = 16 * 1024;
/**
 * Past this length the encoding so far goes into a streaming hash. Below it
 * the whole encoding is hashed at once with the one-shot `crypto.hash`, which
 * saves creating a Hash object: most results never reach it.
 */
const STREAM_LENGTH = 64 * 1024;

/**
 * A prefix-free encoding hashed with sha256: every string carries its length,
 * so no escaping (and no copy of a large string) is needed for the encoding to
 * be unambiguous.
 */
class OutcomeEncoder {
  private hash: Hash | undefined;
  private buffer = "";
  private readonly ancestors: object[] = [];

  constructor(private readonly volatileKeys: ReadonlySet<string>) {}

  token(text: string): void {
    this.buffer += text;
    if (this.buffer.length > STREAM_LENGTH) this.flush();
  }

  string(text: string): void {
    if (text.length < DIRECT_STRING_LENGTH) {
      this.token(`s${text.length}:${text}`);
      return;
    }
    this.buffer += `s${text.length}:`;
    this.flush();
    (this.hash as Hash).update(text);
  }

  value(value: unknown): void {
    switch (typeof value) {
      case "string":
        return this.string(value);
      case "number":
        return this.token(`n${Object.is(value, -0) ? "0" : String(value)};`);
      case "boolean":
        return this.token(value ? "T" : "F");
      case "bigint":
        return this.token(`b${value.toString()};`);
      case "undefined":
        return this.token("U");
      case "function":
        return this.token("f");
      case "symbol":
        return this.token("y");
    }
    if (value === null) return this.token("Z");
    const object = value as object;
    const depth = this.ancestors.indexOf(object);
    if (depth >= 0) return this.token(`c${depth};`);
    // No try/finally: an encoder is used once, and a throwing toJSON aborts it.
    this.ancestors.push(object);
    this.object(object);
    this.ancestors.pop();
  }

  digest(): string {
    if (this.hash === undefined) return sha256Hex(this.buffer);
    this.flush();
    return this.hash.digest("hex");
  }

  private object(object: object): void {
    if (Array.isArray(object)) return this.list("[", object);
    if (ArrayBuffer.isView(object)) {
      this.buffer += `x${object.byteLength}:`;
      this.flush();
      (this.hash as Hash).update(new Uint8Array(object.buffer, object.byteOffset, object.byteLength));
      return;
    }
    if (object instanceof ArrayBuffer) return this.object(new Uint8Array(object));
    if (object instanceof Error) {
      this.token("e");
      this.string(object.name);
      this.string(object.message);
      return;
    }
    if (object instanceof Map) return this.list("M", [...object.entries()]);
    if (object instanceof Set) return this.list("S", [...object.values()]);
    const toJSON = (object as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") {
      this.token("J");
      return this.value(toJSON.call(object));
    }
    const record = object as Record<string, unknown>;
    this.token("{");
    for (const key of Object.keys(record).sort()) {
      if (this.volatileKeys.has(key)) continue;
      this.string(key);
      this.value(record[key]);
    }
    this.token("}");
  }

  private list(open: string, items: readonly unknown[]): void {
    this.token(`${open}${items.length}:`);
    for (const item of items) this.value(item);
  }

  private flush(): void {
    this.hash ??= createHash("sha256");
    if (this.buffer.length === 0) return;
    this.hash.update(this.buffer);
    this.buffer = "";
  }
}
