/**
 * The options of `SessionNodeWriter` and of its methods, and their schema,
 * in one file: session-node-writer.ts imports them, and nothing here
 * imports back.
 */
import { boolean, checkArgument, func, hasMethods, oneOf, optionsSchema } from "./options/option-schema";
import type { SessionCommitFailure } from "./commit-failure";
import type { LeaseFence } from "./lease-fence";
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

/**
 * Takes the options of another `new SessionNodeWriter` for a session that
 * already has a writer in this process (which `new` returns): a different
 * `batching` or `onCommitError` is a misuse, since both callers would rely
 * on theirs, and throws a `TypeError` saying what to do. Returns the
 * handler the writer reports to from now on.
 * @internal
 */
export function acceptSharedOptions(
  writer: { readonly sessionId: string; readonly location: string; readonly batching: SessionWriteBatching; readonly onCommitError: ((failure: SessionCommitFailure) => void) | undefined },
  options: SessionNodeWriterOptions,
): ((failure: SessionCommitFailure) => void) | undefined {
  const { sessionId, location, batching, onCommitError } = writer;
  if (options.batching !== undefined && options.batching !== batching) {
    throw new TypeError(
      `Session '${sessionId}' (${location}) already has a writer in this process with batching "${batching}", ` +
        `so new SessionNodeWriter(store, '${sessionId}', { batching: "${options.batching}" }) cannot return it: ` +
        `use one batching per session, or pass { shared: false } for a writer of its own`,
    );
  }
  const handler = options.onCommitError;
  if (handler === undefined || handler === onCommitError) return onCommitError;
  if (onCommitError !== undefined) {
    throw new TypeError(
      `Session '${sessionId}' (${location}) already has a writer in this process with another onCommitError: ` +
        `share that writer, or pass { shared: false } for a writer of its own`,
    );
  }
  return handler;
}

/** Options of `SessionNodeWriter.append`. */
export interface SessionAppendOptions {
  /**
   * The caller hands the values over: `input`, `output` and `metadata` are
   * plain JSON data that nobody mutates afterwards. The writer then keeps
   * them without a snapshot (no copy now; a file store serialises them on
   * commit). The runtime uses it for model turns.
   * @default false
   */
  owned?: boolean;
  /**
   * The run lease the node is written under: every commit that holds it
   * carries the fence, and the store refuses the commit when the run's
   * lease has moved to another epoch. The writer then drops the
   * operations of that lease (they are never stored) and commits the
   * rest; `flush({ fence })` throws the `LeaseLostError`. Resumable
   * runs fence their step and run nodes this way.
   * @default none
   */
  fence?: LeaseFence;
}

/**
 * Options of `SessionNodeWriter.update`.
 * @example
 * ```ts
 * writer.update(stepId, { output: result, metadata: { status: "completed" } }, { fence: { runId, epoch } });
 * ```
 */
export interface SessionUpdateOptions {
  /** The run lease the update is made under (see {@link SessionAppendOptions.fence}). @default none */
  fence?: LeaseFence;
}

/**
 * Options of `SessionNodeWriter.flush`.
 * @example
 * ```ts
 * writer.flush({ fence: { runId, epoch } }); // throws LeaseLostError when a write under that lease was refused
 * ```
 */
export interface SessionFlushOptions {
  /**
   * Also throw the `LeaseLostError` when a write made under this
   * fence was refused, by this commit or an earlier one.
   * @default none
   */
  fence?: LeaseFence;
}
