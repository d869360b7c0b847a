/**
 * Deterministic JSON for hashing tool arguments (internal to the loops
 * folder): object keys sorted, and values plain `JSON.stringify` would lose or
 * throw on written as tagged objects, so two calls that differ only in such a
 * value never share a hash.
 *
 * - cycles: `"[Circular]"` where a value refers back to one of its ancestors;
 * - bigint: `{"$bigint":"12"}`; NaN / ±Infinity: `{"$number":"NaN"}`;
 * - Uint8Array and other binary views: `{"$bytes":"<base64>"}`;
 * - Error: `{"$error":{"name":…,"message":…}}`;
 * - Map / Set: `{"$map":[[k,v],…]}` / `{"$set":[…]}` in insertion order;
 * - objects with `toJSON` (Date) through it; undefined, functions and symbols
 *   dropped from objects and `null` in arrays, as JSON does.
 */
export function stableStringify(value: unknown): string {
  return write(value, []) ?? "null";
}

function write(value: unknown, ancestors: object[]): string | undefined {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : `{"$number":"${String(value)}"}`;
    case "boolean":
      return value ? "true" : "false";
    case "bigint":
      return `{"$bigint":"${value.toString()}"}`;
    case "undefined":
    case "function":
    case "symbol":
      return undefined;
  }
  if (value === null) return "null";
  const object = value as object;
  if (ancestors.includes(object)) return '"[Circular]"';
  // No try/finally: `ancestors` belongs to one stableStringify call, which a throw ends.
  ancestors.push(object);
  const written = writeObject(object, ancestors);
  ancestors.pop();
  return written;
}

function writeObject(object: object, ancestors: object[]): string {
  if (Array.isArray(object)) return writeArray(object, ancestors);
  if (ArrayBuffer.isView(object)) {
    const bytes = Buffer.from(object.buffer, object.byteOffset, object.byteLength);
    return `{"$bytes":"${bytes.toString("base64")}"}`;
  }
  if (object instanceof ArrayBuffer) return `{"$bytes":"${Buffer.from(object).toString("base64")}"}`;
  if (object instanceof Error) {
    return `{"$error":{"message":${JSON.stringify(object.message)},"name":${JSON.stringify(object.name)}}}`;
  }
  if (object instanceof Map) {
    return `{"$map":${writeArray([...object.entries()], ancestors)}}`;
  }
  if (object instanceof Set) return `{"$set":${writeArray([...object.values()], ancestors)}}`;
  const toJSON = (object as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") return write(toJSON.call(object), ancestors) ?? "null";

  const record = object as Record<string, unknown>;
  let text = "{";
  for (const key of Object.keys(record).sort()) {
    const written = write(record[key], ancestors);
    if (written === undefined) continue;
    const quoted = PLAIN_KEY.test(key) ? `"${key}"` : JSON.stringify(key);
    text += text.length === 1 ? `${quoted}:${written}` : `,${quoted}:${written}`;
  }
  return `${text}}`;
}

/** Keys JSON writes as they are, quoted: no escaping needed. */
const PLAIN_KEY = /^[\w$.-]*$/;

function writeArray(items: readonly unknown[], ancestors: object[]): string {
  let text = "[";
  for (let i = 0; i < items.length; i++) text += `${i === 0 ? "" : ","}${write(items[i], ancestors) ?? "null"}`;
  return `${text}]`;
}
