import { createHash, randomBytes } from "node:crypto";
import { ContinuationConsumedError } from "@rein/guard";
import type { Context } from "../context/context";
import { isConsumeOnceStore, randomIdText } from "@rein/session";
import type { TurnContinuation } from "./turns";

/** Continuations resumed by this process: a second resume here is refused without asking the store. */
const consumedHere = new Set<string>();

/** A new continuation id: 128 random bits, never beginning with `-` (see {@link randomIdText}). @internal */
export function newContinuationId(): string {
  return randomIdText(randomBytes);
}

/**
 * Marks `continuation` consumed before anything of its resume runs, or
 * throws {@link ContinuationConsumedError} when it already was. With a store
 * that can consume once (every built-in one), the mark is one atomic write
 * in the store, so two processes resuming the same continuation at once
 * cannot both go on; without one, this process remembers it.
 * @internal
 */
export function consumeContinuation(continuation: TurnContinuation, context: Context): void {
  const id = continuationIdOf(continuation);
  if (consumedHere.has(id)) throw new ContinuationConsumedError(id, continuation.sessionId);
  consumedHere.add(id);
  const writer = context.store;
  if (writer === undefined || !isConsumeOnceStore(writer.store)) return;
  let consumed: boolean;
  try {
    consumed = writer.store.consumeOnce(writer.sessionId, `continuation:${id}`);
  } catch (error) {
    // The store could not say: nothing was consumed, and the same resume may be tried again.
    consumedHere.delete(id);
    throw error;
  }
  if (!consumed) throw new ContinuationConsumedError(id, continuation.sessionId);
}

/** The continuation's id; one made before ids existed is known by what it pauses (the same for every copy of it). */
function continuationIdOf(continuation: TurnContinuation): string {
  if (typeof continuation.id === "string" && continuation.id !== "") return continuation.id;
  const { run } = continuation;
  const pending = run.pending.map((call) => call.id).join(",");
  return createHash("sha256").update(`${continuation.sessionId ?? ""}\n${run.requestedBy ?? ""}\n${pending}`).digest("base64url").slice(0, 22);
}
