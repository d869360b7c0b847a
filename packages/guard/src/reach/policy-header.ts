import { createHmac, timingSafeEqual } from "node:crypto";
import type { ReachBudget } from "./reach-budget";
import { PolicyHeaderError } from "./reach-errors";
import { NUMBER_FIELDS, describe, finiteProblem, normalizeBudget, ordered, zonesProblem, type BudgetDraft } from "./budget-fields";

/**
 * The HTTP header that carries a {@link ReachBudget} from a caller to a
 * callee in another process (HTTP header names are case-insensitive; Node
 * gives them lower-cased: `request.headers["x-agent-policy"]`).
 */
export const POLICY_HEADER_NAME = "X-Agent-Policy";

/**
 * The longest header value {@link decodePolicyHeader} accepts, in characters;
 * {@link encodePolicyHeader} never produces a longer one.
 * @default 4096
 */
export const MAX_POLICY_HEADER_LENGTH = 4096;

/**
 * How long a signed header is valid after it was encoded, in ms.
 * @default 300_000 (5 minutes)
 */
export const DEFAULT_POLICY_HEADER_TTL_MS = 300_000;

/** How far ahead of the callee's clock a caller's may run: added to the default `maxTtlMs` of a decode. */
export const POLICY_HEADER_CLOCK_SKEW_MS = 60_000;

/** Options of {@link encodePolicyHeader}. */
export interface EncodePolicyHeaderOptions {
  /**
   * The secret to sign the header with (HMAC-SHA256); of a list, the first
   * signs (the others are for decoding during a rotation). Wins over
   * `REIN_POLICY_SECRET` (comma-separated: `new,old`); `undefined` (or
   * leaving it out) means "use `REIN_POLICY_SECRET` if set". An empty string
   * or list is a `TypeError`.
   * @default process.env.REIN_POLICY_SECRET
   */
  secret?: string | readonly string[];
  /**
   * How long a signed header is valid: it carries `now + ttlMs` (`v`, valid until) and a
   * callee refuses it after that (`expired`). Only signed headers carry an
   * expiry: an unsigned one could be edited anyway.
   * @default DEFAULT_POLICY_HEADER_TTL_MS (5 minutes)
   */
  ttlMs?: number;
  /**
   * The issuing run (`r`, 1-128 of `A-Z a-z 0-9 . _ : -`), carried by a
   * signed header so the callee knows which run of the caller sent it
   * ({@link inspectPolicyHeader}). Ignored when unsigned.
   */
  runId?: string;
  /** The clock the expiry counts from, epoch ms. @default Date.now() */
  now?: number;
}

/** Options of {@link decodePolicyHeader}. */
export interface DecodePolicyHeaderOptions {
  /**
   * The secret the header must be signed with; of a list, any (a rotation:
   * `["new", "old"]`). Wins over `REIN_POLICY_SECRET` (comma-separated:
   * `new,old`); `undefined` (or leaving it out) means "use
   * `REIN_POLICY_SECRET` if set". An empty string or list is a `TypeError`.
   * @default process.env.REIN_POLICY_SECRET
   */
  secret?: string | readonly string[];
  /** The clock the expiry is checked against, epoch ms. @default Date.now() */
  now?: number;
  /**
   * The furthest ahead of `now` a header's expiry may be, in ms: a header
   * that claims to live longer (made with a long `ttlMs`, or by a caller
   * whose clock runs ahead) is refused as `expired`, so a captured one
   * cannot be replayed for longer than this. Raise it with the `ttlMs` your
   * callers encode with.
   * @default DEFAULT_POLICY_HEADER_TTL_MS + POLICY_HEADER_CLOCK_SKEW_MS (6 minutes)
   */
  maxTtlMs?: number;
  /**
   * Refuse an unsigned header (`PolicyHeaderError`, reason `"unsigned"`).
   * `true` needs a secret (a `TypeError` otherwise: nothing could be
   * verified). `false` with a secret accepts unsigned headers but still
   * verifies signed ones — only for rolling a secret out to callers one by
   * one: anyone can then send an unsigned header with any budget (the local
   * policy still clamps it).
   * @default true when a secret is set, false otherwise
   */
  requireSignature?: boolean;
}

/**
 * The policy secrets an option or the environment gives (the first signs,
 * any verifies), `undefined` for none. `REIN_POLICY_SECRET` is split at
 * commas, each part trimmed, empty parts dropped.
 */
function resolveSecrets(options: { secret?: unknown }, owner: string): readonly string[] | undefined {
  const { secret } = options;
  if (secret !== undefined) {
    const list = typeof secret === "string" ? [secret] : Array.isArray(secret) ? (secret as unknown[]) : undefined;
    if (list === undefined || list.length === 0 || list.some((item) => typeof item !== "string" || item === "")) {
      throw new TypeError(`${owner}: option 'secret' must be a non-empty string or a non-empty list of them (or left out to use REIN_POLICY_SECRET), got ${describe(secret)}`);
    }
    return list as string[];
  }
  // A blank variable is an unset one (`REIN_POLICY_SECRET= node server.js`).
  const fromEnvironment = (process.env.REIN_POLICY_SECRET ?? "").split(",").map((part) => part.trim()).filter((part) => part !== "");
  return fromEnvironment.length === 0 ? undefined : fromEnvironment;
}

function checkOptions(options: unknown, known: readonly string[], owner: string): asserts options is Record<string, unknown> {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError(`${owner}: options must be an object such as { secret }, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw new TypeError(`${owner}: unknown option '${key}' (known: ${known.join(", ")})`);
  }
}

/** Header keys in the order they are written: the budget's, then a signed header's expiry and issuing run. */
const HEADER_KEYS: readonly string[] = ["d", "m", "z", "t", "c", "e", "v", "r"];
const RUN_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const LATEST_INSTANT = 8.64e15;

/**
 * Encodes the budget a caller passes on as the value of the
 * {@link POLICY_HEADER_NAME} header: base64url of the JSON
 * `{ d, m, z, t, c, e }` (depth left, memory MB left, zones, tokens left,
 * cost left in USD, deadline in epoch ms; a field without a limit — absent or
 * `Infinity` — is left out) and, when a secret is set (`options.secret`, else
 * `REIN_POLICY_SECRET`; of several, the first), `v` (valid until: now +
 * `ttlMs`, 5 minutes by default), `r` (the issuing run, when given) and
 * `.` + base64url(HMAC-SHA256(secret, the payload part)).
 *
 * @throws TypeError naming the field or option when the budget or an option is not what it should be, or when the header would be longer than {@link MAX_POLICY_HEADER_LENGTH}.
 * @example
 * ```ts
 * const value = encodePolicyHeader({ depth: 2, tokens: 15_000, deadline: Date.now() + 20_000 });
 * await fetch(url, { headers: { [POLICY_HEADER_NAME]: value } });
 * ```
 */
export function encodePolicyHeader(budget: ReachBudget, options: EncodePolicyHeaderOptions = {}): string {
  checkOptions(options, ["secret", "ttlMs", "runId", "now"], "encodePolicyHeader");
  const secret = resolveSecrets(options, "encodePolicyHeader")?.[0];
  const { ttlMs = DEFAULT_POLICY_HEADER_TTL_MS, runId, now = Date.now() } = options;
  if (typeof ttlMs !== "number" || !Number.isFinite(ttlMs) || ttlMs <= 0) throw new TypeError(`encodePolicyHeader: option 'ttlMs' must be a positive number of ms, got ${describe(ttlMs)}`);
  if (runId !== undefined && (typeof runId !== "string" || !RUN_ID.test(runId))) throw new TypeError("encodePolicyHeader: option 'runId' must be 1-128 characters of A-Z a-z 0-9 . _ : -");
  if (typeof now !== "number" || !Number.isFinite(now)) throw new TypeError(`encodePolicyHeader: option 'now' must be a finite number of epoch ms, got ${describe(now)}`);
  const normalized = normalizeBudget(budget, "encodePolicyHeader");
  const wire: Record<string, unknown> = {};
  for (const key of HEADER_KEYS.slice(0, 6)) {
    const value = key === "z" ? normalized.zones : normalized[NUMBER_FIELDS.find((field) => field.key === key)!.name];
    if (value !== undefined && value !== Infinity) wire[key] = value;
  }
  if (secret !== undefined) {
    // Only a signed header can hold a caller to an expiry: an unsigned one could be edited.
    wire["v"] = Math.min(LATEST_INSTANT, Math.ceil(now + ttlMs));
    if (runId !== undefined) wire["r"] = runId;
  }
  const payload = Buffer.from(JSON.stringify(wire), "utf8").toString("base64url");
  const header = secret === undefined ? payload : `${payload}.${sign(secret, payload)}`;
  if (header.length > MAX_POLICY_HEADER_LENGTH) {
    throw new TypeError(
      `encodePolicyHeader: the header would be ${header.length} characters, more than the ${MAX_POLICY_HEADER_LENGTH} a callee accepts (${normalized.zones?.length ?? 0} zones): pass fewer or shorter zone names`,
    );
  }
  return header;
}

function sign(secret: string, payload: string): string {
  return createHmac("sha256", secret).update(payload, "utf8").digest("base64url");
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Decodes a received {@link POLICY_HEADER_NAME} header into the budget the
 * caller had left. With a secret (`options.secret`, else
 * `REIN_POLICY_SECRET`) the header must carry a valid signature, compared in
 * constant time, checked before the payload is read. Without a secret a
 * signature is not checked (only its form), so a callee can accept callers
 * that already sign before it gets the secret itself.
 *
 * A field the header leaves out sets no limit (`depth: Infinity` when `d` is
 * absent); clamp the result to the local policy with {@link clampBudget}.
 *
 * @throws PolicyHeaderError for any value that is not a header {@link encodePolicyHeader} produced with this secret: `reason` `"missing"` (undefined, null, ""), `"malformed"` (not a string, longer than {@link MAX_POLICY_HEADER_LENGTH}, more than one `.`, not canonical unpadded base64url, not UTF-8 JSON of an object, an unknown field, a field of the wrong type, negative, fractional where an integer is due, or too large), `"bad-signature"` (no secret of the list matches), `"unsigned"` or `"expired"` (past its `v`, or signed without one). Never any other error for any `value`.
 * @throws TypeError when an option is not what it should be, or `requireSignature: true` is given without a secret.
 * @example
 * ```ts
 * const budget = clampBudget(decodePolicyHeader(request.headers["x-agent-policy"]), reach.limits);
 * ```
 */
export function decodePolicyHeader(value: unknown, options: DecodePolicyHeaderOptions = {}): ReachBudget {
  return inspect(value, options, "decodePolicyHeader").budget;
}

/**
 * What a received header holds: the budget, whether a signature was
 * verified, and for a signed header its expiry and issuing run.
 * @example
 * ```ts
 * const { budget, runId } = inspectPolicyHeader(request.headers["x-agent-policy"]);
 * ```
 */
export interface PolicyHeaderContents {
  readonly budget: ReachBudget;
  /** True when a signature was verified with a secret of this process. */
  readonly signed: boolean;
  /** Epoch ms after which the header is refused (`v`); a signed header always has one. */
  readonly expiresAt?: number;
  /** The caller's run that issued the header (`r`), when it said. */
  readonly runId?: string;
}

/**
 * {@link decodePolicyHeader}, returning with the budget what else the
 * header carries: whether it was verified, its expiry and its issuing run.
 * The same checks and errors.
 * @throws PolicyHeaderError as {@link decodePolicyHeader} does.
 * @example
 * ```ts
 * const { budget, runId } = inspectPolicyHeader(header);
 * log.info({ callerRun: runId }, "budget received");
 * ```
 */
export function inspectPolicyHeader(value: unknown, options: DecodePolicyHeaderOptions = {}): PolicyHeaderContents {
  return inspect(value, options, "inspectPolicyHeader");
}

function inspect(value: unknown, options: DecodePolicyHeaderOptions, owner: string): PolicyHeaderContents {
  checkOptions(options, ["secret", "requireSignature", "now", "maxTtlMs"], owner);
  const secret = resolveSecrets(options, owner);
  const { requireSignature = secret !== undefined, now = Date.now(), maxTtlMs = DEFAULT_POLICY_HEADER_TTL_MS + POLICY_HEADER_CLOCK_SKEW_MS } = options;
  if (typeof now !== "number" || !Number.isFinite(now)) throw new TypeError(`${owner}: option 'now' must be a finite number of epoch ms, got ${describe(now)}`);
  if (typeof maxTtlMs !== "number" || !(maxTtlMs > 0)) throw new TypeError(`${owner}: option 'maxTtlMs' must be a positive number of ms, got ${describe(maxTtlMs)}`);
  if (typeof requireSignature !== "boolean") {
    throw new TypeError(`${owner}: option 'requireSignature' must be a boolean, got ${describe(requireSignature)}`);
  }
  if (requireSignature && secret === undefined) {
    throw new TypeError(`${owner}: requireSignature needs a secret to verify with: set REIN_POLICY_SECRET or pass { secret }`);
  }
  try {
    return decode(value, secret, requireSignature, now, maxTtlMs);
  } catch (error) {
    if (PolicyHeaderError.isInstance(error)) throw error;
    // Unreachable by design; kept so no input can ever surface another error type.
    throw new PolicyHeaderError("malformed", "the value could not be read", { cause: error });
  }
}

function decode(value: unknown, secrets: readonly string[] | undefined, requireSignature: boolean, now: number, maxTtlMs: number): PolicyHeaderContents {
  if (value === undefined || value === null || value === "") throw new PolicyHeaderError("missing");
  if (typeof value !== "string") {
    throw malformed(Array.isArray(value) ? "several values were sent (an array)" : `expected a string, got ${describe(value)}`);
  }
  if (value.length > MAX_POLICY_HEADER_LENGTH) throw malformed(`${value.length} characters, more than the ${MAX_POLICY_HEADER_LENGTH} allowed`);
  const parts = value.split(".");
  if (parts.length > 2) throw malformed(`${parts.length - 1} '.' separators, at most one is allowed (payload.signature)`);
  const [payload, signature] = parts as [string, string | undefined];
  if (!BASE64URL.test(payload)) throw malformed("the payload is not base64url (A-Z a-z 0-9 - _, no padding)");
  if (signature !== undefined && !BASE64URL.test(signature)) throw malformed("the signature is not base64url (A-Z a-z 0-9 - _, no padding)");
  let signed = false;
  if (secrets !== undefined) {
    if (signature !== undefined) {
      verify(secrets, payload, signature);
      signed = true;
    } else if (requireSignature) throw new PolicyHeaderError("unsigned");
  }
  const { budget, expiresAt, runId } = parsePayload(payload);
  // A signed header without an expiry could be replayed forever; an unsigned one's expiry is honoured too.
  if (signed && expiresAt === undefined) throw new PolicyHeaderError("expired", "signed without an expiry ('v')");
  if (expiresAt !== undefined && expiresAt <= now) throw new PolicyHeaderError("expired", `expired ${Math.round((now - expiresAt) / 1000)} s ago`);
  // An expiry far ahead would let a captured header be replayed that long: the callee bounds it, whatever the caller set.
  if (expiresAt !== undefined && expiresAt - now > maxTtlMs) {
    throw new PolicyHeaderError("expired", `it claims to be valid ${Math.round((expiresAt - now) / 1000)} s more, beyond the ${Math.round(maxTtlMs / 1000)} s this callee accepts (maxTtlMs; a caller's clock ahead, or a header made to be replayed)`);
  }
  return { budget, signed, ...(expiresAt === undefined ? {} : { expiresAt }), ...(runId === undefined ? {} : { runId }) };
}

/** Verifies `signature` against each secret (a rotation), all of them compared in constant time. */
function verify(secrets: readonly string[], payload: string, signature: string): void {
  const received = Buffer.from(signature, "base64url");
  let matched = false;
  for (const secret of secrets) {
    const expected = createHmac("sha256", secret).update(payload, "utf8").digest();
    // Lengths and the canonical form say nothing about the secret, so they may be checked first.
    if (received.length === expected.length && received.toString("base64url") === signature && timingSafeEqual(received, expected)) matched = true;
  }
  if (!matched) throw new PolicyHeaderError("bad-signature");
}

function parsePayload(payload: string): { budget: ReachBudget; expiresAt: number | undefined; runId: string | undefined } {
  const bytes = Buffer.from(payload, "base64url");
  if (bytes.toString("base64url") !== payload) throw malformed("the payload is not canonical base64url");
  let json: unknown;
  try {
    json = JSON.parse(UTF8.decode(bytes));
  } catch {
    throw malformed("the payload is not UTF-8 JSON");
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw malformed(`the payload is ${describe(json)}, not a JSON object`);
  const record = json as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!HEADER_KEYS.includes(key)) throw malformed(`unknown field ${JSON.stringify(key.slice(0, 20))} (known: ${HEADER_KEYS.join(", ")})`);
  }
  const draft: BudgetDraft = { depth: Infinity };
  for (const field of NUMBER_FIELDS) {
    const value = record[field.key];
    if (value === undefined) continue;
    const problem = finiteProblem(value, field);
    if (problem !== undefined) throw malformed(`field '${field.key}' must be ${problem}, got ${describe(value)}`);
    draft[field.name] = (value as number) + 0;
  }
  if (record.z !== undefined) {
    const problem = zonesProblem(record.z);
    if (problem !== undefined) throw malformed(`field 'z' must be ${problem}`);
    draft.zones = Object.freeze([...(record.z as string[])]);
  }
  const expiresAt = record.v;
  if (expiresAt !== undefined && (typeof expiresAt !== "number" || !Number.isFinite(expiresAt) || expiresAt < 0 || expiresAt > LATEST_INSTANT)) {
    throw malformed(`field 'v' must be a non-negative number ≤ ${LATEST_INSTANT} (expiry, epoch milliseconds), got ${describe(expiresAt)}`);
  }
  const runId = record.r;
  if (runId !== undefined && (typeof runId !== "string" || !RUN_ID.test(runId))) throw malformed("field 'r' must be 1-128 characters of A-Z a-z 0-9 . _ : - (the issuing run)");
  return { budget: ordered(draft), expiresAt: expiresAt as number | undefined, runId: runId as string | undefined };
}

function malformed(detail: string): PolicyHeaderError {
  return new PolicyHeaderError("malformed", detail);
}
