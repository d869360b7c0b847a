/**
 * The options of `SessionNodeWriter` and their schema, in one file:
 * session-node-writer.ts imports both, and nothing here imports back.
 */
import { boolean, checkArgument, func, hasMethods, oneOf, optionsSchema } from "./options/option-schema";
import type { SessionCommitFailure } from "./commit-failure";
import { checkSessionId } from "./session-arguments";

/** When a writer commits what it was handed: at the end of the tick, on `flush()` only, or at once. */
export type SessionWriteBatching = "tick" | "manual" | "none";

/**
 * Options of `SessionNodeWriter`.
 * @example
 * ```ts
 * new SessionNodeWriter(store, "s1", { batching: "manual" });
 * new SessionNodeWriter(store, "s1", { onCommitError: (failure) => logger.error({ err: failure.error }, "commit failed") });
 * ```
 */
export interface SessionNodeWriterOptions {
  /** @default "tick" */
  batching?: SessionWriteBatching;
  /**
   * `true`: the writer is the one writer of this (store, session) in the
   * process, returned again by every `new SessionNodeWriter(store,
   * sessionId)` and `Context.forSession(store, sessionId)` while it is in
   * use. `false`: a writer of its own, outside that registry, as another
   * process would have (tools, tests).
   * @default true
   */
  shared?: boolean;
  /**
   * Called once per failure when a commit fails (the writer keeps the
   * operations and retries them). A handler that throws is ignored. The
   * failure is also published on `SESSION_COMMIT_FAILED_CHANNEL`.
   * @default none
   */
  onCommitError?: (failure: SessionCommitFailure) => void;
}

/** {@link SessionNodeWriterOptions}: the third argument of the `SessionNodeWriter` constructor. */
export const sessionNodeWriterOptionsSchema = optionsSchema<SessionNodeWriterOptions>("SessionNodeWriter", {
  batching: oneOf("tick", "manual", "none"),
  shared: boolean,
  onCommitError: func(),
});

const sessionStore = hasMethods("a session store (SessionStore, InMemorySessionStore or a SessionStoreLike)", "getSession", "commit", "head");

/** Checks the arguments of the `SessionNodeWriter` constructor. */
export function checkWriterArguments(store: unknown, sessionId: unknown, options: unknown): void {
  checkArgument("SessionNodeWriter", "store", sessionStore, store);
  checkSessionId("SessionNodeWriter", sessionId);
  sessionNodeWriterOptionsSchema.parse(options);
}
