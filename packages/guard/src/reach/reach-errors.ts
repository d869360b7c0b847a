import { UsageError, type ReinErrorOptions } from "../errors/rein-error";

/**
 * Why a received `X-Agent-Policy` header was refused:
 * - `"missing"`: no header (`undefined`, `null` or `""`);
 * - `"malformed"`: not a header `encodePolicyHeader` could have produced;
 * - `"bad-signature"`: signed, but not with this server's secret, or changed after signing;
 * - `"unsigned"`: no signature, and this server requires one;
 * - `"expired"`: past the expiry it carries (a signed header always carries one), or signed without one.
 */
export type PolicyHeaderErrorReason = "missing" | "malformed" | "bad-signature" | "unsigned" | "expired";

const HEADER = "X-Agent-Policy";

const ADVICE: Readonly<Record<PolicyHeaderErrorReason, string>> = {
  missing: `send the caller's remaining budget as the ${HEADER} header, the value of encodePolicyHeader(budget) (reachFetch adds it)`,
  malformed: `send the value of encodePolicyHeader(budget) unchanged, exactly one ${HEADER} header`,
  "bad-signature": "the header was changed after signing or signed with another secret: sign it with the same REIN_POLICY_SECRET as this server, and send it unchanged",
  unsigned: "this server requires a signed header: set the same REIN_POLICY_SECRET on the caller (encodePolicyHeader signs with it) or pass { secret } to encodePolicyHeader",
  expired: "a signed header is valid for a few minutes (ttlMs, default 5 min): encode a fresh one for each call (reachFetch does), and keep the caller's and callee's clocks in sync",
};

const SUMMARY: Readonly<Record<PolicyHeaderErrorReason, string>> = {
  missing: `${HEADER} header missing`,
  malformed: `${HEADER} header malformed`,
  "bad-signature": `${HEADER} header signature does not match`,
  unsigned: `${HEADER} header unsigned`,
  expired: `${HEADER} header expired`,
};

/**
 * A caller sent a reach budget header (`X-Agent-Policy`) this process cannot
 * accept: missing, malformed, with a wrong signature, or unsigned when a
 * signature is required. A usage error: the caller's code or configuration is
 * wrong (a server answers it with HTTP 400, or 401 for `bad-signature` /
 * `unsigned`). The message says what is wrong and what to send; it never
 * contains a secret, a signature or the header's payload.
 *
 * @example
 * ```ts
 * try { budget = decodePolicyHeader(request.headers["x-agent-policy"]); } catch (error) {
 *   if (PolicyHeaderError.isInstance(error)) return reply(error.reason === "bad-signature" || error.reason === "unsigned" ? 401 : 400, error.message);
 *   throw error;
 * }
 * ```
 */
export class PolicyHeaderError extends UsageError {
  static {
    this.defineErrorName("PolicyHeaderError");
  }

  /** Why the header was refused. */
  readonly reason: PolicyHeaderErrorReason;

  /**
   * @param reason why the header was refused.
   * @param detail what exactly is wrong (for `"malformed"`: which part or field); never a secret or the header's content.
   */
  constructor(reason: PolicyHeaderErrorReason, detail?: string, options?: ReinErrorOptions) {
    super(`${SUMMARY[reason]}${detail === undefined ? "" : `: ${detail}`} — ${ADVICE[reason]}`, options);
    this.reason = reason;
  }
}
