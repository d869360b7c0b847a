import type { ExportGraphOptions, SessionCreateOptions } from "./session-store-like";
import type { ReadAncestryOptions } from "./ancestry";
import { anyOf, checkArgument, oneOf, optionsSchema, rule, string, type Rule } from "./options/option-schema";
import { hasUnstorableText } from "./storable-text";

/**
 * Argument checks of the session store APIs: ids are non-empty strings,
 * option objects have known keys. Only types are checked here; whether a
 * session or node exists is the store's business.
 */

const nullableString = anyOf([string, oneOf(null)], "a string or null");

/**
 * An id every store keeps as given: a non-empty string with no NUL and no
 * lone surrogate (a database would cut it or change it, and two ids could
 * become one: `storable-text.ts`).
 */
const storableId: Rule = {
  expected: "a non-empty string",
  kind: "string",
  check: (value) => {
    if (typeof value !== "string" || value === "") return { path: "", value, hint: "expected a non-empty string" };
    if (!hasUnstorableText(value)) return undefined;
    return { path: "", value, hint: "an id may not hold a NUL character or a lone UTF-16 surrogate (no store could keep it as given)" };
  },
};

/** Throws a `TypeError` unless `sessionId` is a non-empty string a store can keep. `owner` names the API (`"SessionStore.head"`). */
export function checkSessionId(owner: string, sessionId: unknown): void {
  if (typeof sessionId !== "string" || sessionId === "" || hasUnstorableText(sessionId)) checkArgument(owner, "sessionId", storableId, sessionId);
}

/** Throws a `TypeError` unless `nodeId` is a non-empty string a store can keep (or `null`, when `nullable`). */
export function checkNodeId(owner: string, nodeId: unknown, nullable = false): void {
  if (typeof nodeId === "string" && nodeId !== "" && !hasUnstorableText(nodeId)) return;
  if (nullable && nodeId === null) return;
  checkArgument(owner, "nodeId", nullable ? anyOf([storableId, oneOf(null)], "a non-empty string or null") : storableId, nodeId);
}

/** {@link SessionCreateOptions}: the options of `createSession`. */
export const sessionCreateOptionsSchema = optionsSchema<SessionCreateOptions>("createSession", {
  agentId: nullableString,
  title: nullableString,
});

/** {@link ExportGraphOptions}: the options of `exportGraph`. */
export const exportGraphOptionsSchema = optionsSchema<ExportGraphOptions>("exportGraph", {
  format: oneOf("json", "mermaid", "dot"),
});

/** A count of turns: a positive integer, or `Infinity` for all. */
export const turnCount = rule("a positive integer or Infinity", (value) => value === Infinity || (Number.isInteger(value) && (value as number) > 0), "number");

/** {@link ReadAncestryOptions}: the options of `readAncestry`. */
export const readAncestryOptionsSchema = optionsSchema<ReadAncestryOptions>("readAncestry", {
  turns: turnCount,
});

/**
 * The longest session id `createSession` accepts, in UTF-16 code units. An
 * id travels in URLs, logs, headers and every node row's key; any text
 * shorter than this (a UUID, `tenant:user:chat`, even SQL-looking text or
 * `__proto__`) is stored and read back verbatim; one holding a NUL or a lone
 * surrogate is refused.
 */
export const MAX_SESSION_ID_LENGTH = 256;

const sessionIdToCreate: Rule = {
  expected: `a non-empty string of at most ${MAX_SESSION_ID_LENGTH} characters`,
  kind: "string",
  check: (value) => {
    if (typeof value !== "string" || value === "") return { path: "", value, hint: "expected a non-empty string" };
    if (hasUnstorableText(value)) return storableId.check(value);
    if (value.length <= MAX_SESSION_ID_LENGTH) return undefined;
    return {
      path: "",
      value,
      hint: `a session id is at most ${MAX_SESSION_ID_LENGTH} characters, this one has ${value.length}: use a shorter id (a UUID, or a hash of a longer key)`,
    };
  },
};

/** Checks the arguments of `createSession`: the id (a non-empty string of at most {@link MAX_SESSION_ID_LENGTH} characters) and the options. */
export function checkCreateSessionArguments(owner: string, id: unknown, options: unknown): void {
  if (typeof id !== "string" || id === "" || id.length > MAX_SESSION_ID_LENGTH || hasUnstorableText(id)) checkArgument(owner, "id", sessionIdToCreate, id);
  sessionCreateOptionsSchema.parse(options);
}
