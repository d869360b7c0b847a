/**
 * Text as a database keeps it. PostgreSQL refuses a NUL character in text
 * and in `jsonb` (and a lone UTF-16 surrogate in `jsonb`); SQLite reads text
 * back cut at a NUL; both drivers write a lone surrogate as U+FFFD. So a
 * store that writes to a database puts U+FFFD in their place itself, the
 * same way every time, instead of failing the commit (and the turn it
 * held) or keeping something other than it reads back. Ids are not
 * repaired: an id with either is refused (`session-arguments.ts`).
 */

/** A NUL, a high surrogate not followed by a low one, or a low one not preceded by a high one. */
const UNSTORABLE = /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const EVERY_UNSTORABLE = new RegExp(UNSTORABLE.source, "g");
/** What may be unstorable, found in one cheap scan: most text has neither. */
const SUSPECT = /[\0\ud800-\udfff]/;

/** True when `text` holds a NUL or a lone surrogate (see the file's comment). @internal */
export function hasUnstorableText(text: string): boolean {
  return SUSPECT.test(text) && UNSTORABLE.test(text);
}

/** `text` with each NUL and lone surrogate replaced by U+FFFD. @internal */
export function storableText(text: string): string {
  return SUSPECT.test(text) ? text.replace(EVERY_UNSTORABLE, "\ufffd") : text;
}

/**
 * JSON text as `JSON.stringify` writes it — a NUL as `\u0000`, a lone
 * surrogate as `\udXXX` (a well-formed pair is written as characters, so
 * every surrogate escape it writes is a lone one) — with those escapes
 * replaced by `\ufffd`; escaped backslashes are left alone. @internal
 */
export function storableJson(json: string): string {
  if (!/\\u(?:0000|d[89a-f])/i.test(json)) return json;
  // An odd run of backslashes ends in an escape; an even one is escaped backslashes followed by the text "u…".
  return json.replace(/(\\+)u(?:0000|d[89a-f][0-9a-f]{2})/gi, (match, slashes: string) => (slashes.length % 2 === 1 ? `${slashes.slice(0, -1)}\\ufffd` : match));
}

/**
 * Whether two JSON texts are the same once a store has kept them: equal,
 * or equal with each NUL and lone surrogate as U+FFFD (what PostgreSQL
 * gives back). A resumed run compares a finished step's saved input so.
 * @internal
 */
export function sameJsonWhenStored(a: string, b: string): boolean {
  if (a === b) return true;
  const kept = (json: string) => JSON.stringify(JSON.parse(storableJson(json)));
  return kept(a) === kept(b);
}

/** An optional text field (a session's agent id or title) as a database keeps it: {@link storableText}, or null. @internal */
export function storableOrNull(text: string | null | undefined): string | null {
  return text === undefined || text === null ? null : storableText(text);
}
