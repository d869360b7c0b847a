/**
 * Which origins a caller's reach budget may be sent to: the allow list that
 * `reachFetch` (in `@rein/core`) consults before it adds `X-Agent-Policy` to
 * a request. Policy with no I/O, beside the header codec.
 */

/** The origins set by {@link setReachOrigins}; undefined: `REIN_REACH_ORIGINS`, else loopback only. */
let configured: readonly string[] | undefined;

const LOOPBACK_HOSTS = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/**
 * Sets the origins `reachFetch` sends the caller's `X-Agent-Policy` budget
 * to (`https://agents.internal:8443`; scheme, host and port must match);
 * `undefined` goes back to `REIN_REACH_ORIGINS` (comma-separated origins),
 * and without that to loopback only (`localhost`, `127.0.0.0/8`, `[::1]`,
 * any port). Any other URL gets no budget header (the `traceparent` still
 * travels): a third party called with `reachFetch` cannot capture a budget
 * to replay.
 * @throws TypeError when an entry is not an origin (`scheme://host[:port]`, nothing after).
 * @example
 * ```ts
 * setReachOrigins(["https://search-agent.internal", "http://127.0.0.1:8787"]);
 * ```
 */
export function setReachOrigins(origins: readonly string[] | undefined): void {
  if (origins === undefined) {
    configured = undefined;
    return;
  }
  if (!Array.isArray(origins)) throw new TypeError("setReachOrigins(origins): origins must be a list of origins such as ['https://agents.internal'] (or undefined)");
  configured = origins.map((origin) => originOf(origin, "setReachOrigins"));
}

/**
 * The origins a budget header is sent to now: those set by
 * {@link setReachOrigins}, else those of `REIN_REACH_ORIGINS`, else
 * `"loopback"`.
 * @throws TypeError when `REIN_REACH_ORIGINS` holds something that is not an origin.
 * @example
 * ```ts
 * reachOrigins(); // "loopback", or ["https://search-agent.internal"]
 * ```
 */
export function reachOrigins(): readonly string[] | "loopback" {
  if (configured !== undefined) return configured;
  const fromEnvironment = (process.env.REIN_REACH_ORIGINS ?? "").split(",").map((part) => part.trim()).filter((part) => part !== "");
  return fromEnvironment.length === 0 ? "loopback" : fromEnvironment.map((origin) => originOf(origin, "REIN_REACH_ORIGINS"));
}

/**
 * Whether `reachFetch` sends the budget header to `url`: its origin is on
 * the list ({@link reachOrigins}), or, without a list, it is a loopback
 * address. A URL that cannot be parsed gets none.
 * @example
 * ```ts
 * mayReceiveBudget("https://evil.example/steal"); // false unless listed
 * ```
 */
export function mayReceiveBudget(url: string | URL): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return false;
  const allowed = reachOrigins();
  return allowed === "loopback" ? LOOPBACK_HOSTS.test(parsed.hostname) : allowed.includes(parsed.origin);
}

function originOf(text: unknown, owner: string): string {
  let parsed: URL | undefined;
  try {
    parsed = typeof text === "string" ? new URL(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== "http:" && parsed.protocol !== "https:") || `${parsed.origin}` !== String(text).replace(/\/$/, "")) {
    throw new TypeError(`${owner}: '${String(text).slice(0, 100)}' is not an origin: write scheme://host[:port], e.g. https://agents.internal:8443`);
  }
  return parsed.origin;
}
