import { randomBytes } from "node:crypto";

/** The W3C Trace Context header that travels beside `X-Agent-Policy`. */
export const TRACEPARENT_HEADER_NAME = "traceparent";

/**
 * A parsed W3C `traceparent` header (Trace Context level 1), every part as
 * the lowercase hex it was sent as.
 * @example
 * ```ts
 * parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
 * // { version: "00", traceId: "4bf92f3577b34da6a3ce929d0e0e4736", parentId: "00f067aa0ba902b7", flags: "01" }
 * ```
 */
export interface Traceparent {
  /** 2 hex digits; `"00"` today, never `"ff"`. */
  readonly version: string;
  /** 32 hex digits, not all zero: the whole trace. */
  readonly traceId: string;
  /** 16 hex digits, not all zero: the caller's span. */
  readonly parentId: string;
  /** 2 hex digits; bit 0 (`"01"`) = sampled. */
  readonly flags: string;
}

const HEX = /^[0-9a-f]+$/;
const ZEROS = /^0+$/;

function isHex(text: string, length: number): boolean {
  return text.length === length && HEX.test(text);
}

/**
 * Parses a `traceparent` header as W3C Trace Context level 1 says a vendor
 * must: `version-traceid-parentid-flags`, lowercase hex of 2, 32, 16 and 2
 * digits; version `ff`, an all-zero trace id or parent id are invalid;
 * version `00` has exactly these 55 characters. A higher version is read by
 * the same rules and may go on after the flags, but only after a `-`.
 * Spaces and tabs around the value (HTTP's optional whitespace) are ignored.
 *
 * @returns the parts, or `undefined` for anything that is not a valid header (never throws).
 * @example
 * ```ts
 * const parent = parseTraceparent(request.headers.traceparent);
 * if (parent) console.log(parent.traceId);
 * ```
 */
export function parseTraceparent(value: unknown): Traceparent | undefined {
  if (typeof value !== "string") return undefined;
  const text = value.replace(/^[ \t]+|[ \t]+$/g, "");
  if (text.length < 55) return undefined;
  const version = text.slice(0, 2);
  if (!isHex(version, 2) || version === "ff") return undefined;
  if (version === "00" && text.length !== 55) return undefined;
  // Past 55 characters a future version may add fields, each after a '-'.
  if (text.length > 55 && text[55] !== "-") return undefined;
  if (text[2] !== "-" || text[35] !== "-" || text[52] !== "-") return undefined;
  const traceId = text.slice(3, 35);
  const parentId = text.slice(36, 52);
  const flags = text.slice(53, 55);
  if (!isHex(traceId, 32) || ZEROS.test(traceId)) return undefined;
  if (!isHex(parentId, 16) || ZEROS.test(parentId)) return undefined;
  if (!isHex(flags, 2)) return undefined;
  return Object.freeze({ version, traceId, parentId, flags });
}

/** `bytes` random bytes as hex, never all zero (an all-zero id is invalid). */
function randomId(bytes: number): string {
  for (;;) {
    const id = randomBytes(bytes).toString("hex");
    if (!ZEROS.test(id)) return id;
  }
}

/**
 * A `traceparent` that starts a new trace: version `00`, a random trace id
 * and parent id (from `crypto.randomBytes`), flags `01` (sampled).
 * @example
 * ```ts
 * newTraceparent(); // "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
 * ```
 */
export function newTraceparent(): string {
  return `00-${randomId(16)}-${randomId(8)}-01`;
}

/**
 * The `traceparent` to send on a call made inside the trace `parent`: the
 * same trace id, a new random parent id (this call's span), version `00`,
 * and the parent's sampled bit (the other flag bits, undefined in level 1,
 * are sent as zero). A new trace ({@link newTraceparent}) when `parent` is
 * absent or invalid.
 * @example
 * ```ts
 * headers.traceparent = childTraceparent(request.headers.traceparent);
 * ```
 */
export function childTraceparent(parent: string | undefined): string {
  const parsed = parseTraceparent(parent);
  if (parsed === undefined) return newTraceparent();
  const sampled = Number.parseInt(parsed.flags, 16) & 0x01;
  return `00-${parsed.traceId}-${randomId(8)}-0${sampled}`;
}
