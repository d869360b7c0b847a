import { errorMessage } from "./describe-error";
import { ModelBehaviorError, ReinError, UsageError } from "./rein-error";

/**
 * A scoped call was cancelled before or while it ran: a pre-invocation hook
 * threw it, or the caller's `AbortSignal` fired. The call's code node is
 * recorded as `cancelled`. Nobody's fault, so it belongs to no family and
 * extends {@link ReinError} directly.
 */
export class CancelledError extends ReinError {
  static {
    this.defineErrorName("CancelledError");
  }

  constructor(message = "the call was cancelled", options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * A run stopped by its host going away — a server shutting down, a worker
 * draining — rather than by someone who no longer wants it: its running
 * nodes are recorded `interrupted` (not `cancelled`), as after a crash.
 * Abort a run's signal with it.
 * @example
 * ```ts
 * controller.abort(new InterruptedError("server shutting down"));
 * ```
 */
export class InterruptedError extends CancelledError {
  static {
    this.defineErrorName("InterruptedError");
  }

  constructor(message = "the run was interrupted", options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The model's answer to `agent.choose()` was not one of the offered options (model behaviour). */
export class DecisionError extends ModelBehaviorError {
  static {
    this.defineErrorName("DecisionError");
  }

  /** What the model answered. */
  readonly choice: string;
  /** The ids it could have picked. */
  readonly options: readonly string[];

  constructor(choice: string, options: readonly string[]) {
    super(
      `the model chose '${choice}', which is not one of the options (${options.map((o) => `'${o}'`).join(", ")}); ` +
        `rephrase the prompt or the option descriptions so the choice is unambiguous`,
    );
    this.choice = choice;
    this.options = options;
  }
}

/**
 * A turn named a session other than the one its Context records to
 * (refused before anything is created).
 */
export class SessionMismatchError extends UsageError {
  static {
    this.defineErrorName("SessionMismatchError");
  }

  /** The session the request named. */
  readonly requestedSessionId: string;
  /** The session the Context records to. */
  readonly contextSessionId: string;

  constructor(requestedSessionId: string, contextSessionId: string) {
    super(
      `the turn names session '${requestedSessionId}', but its Context records to session '${contextSessionId}'; ` +
        `pass { context: Context.forSession(store, '${requestedSessionId}') }, or leave sessionId out to use the Context's session`,
    );
    this.requestedSessionId = requestedSessionId;
    this.contextSessionId = contextSessionId;
  }
}

/**
 * The model's final answer did not match the run's `responseFormat`, also
 * after one repair request that listed the problems (model behaviour).
 */
export class OutputValidationError extends ModelBehaviorError {
  static {
    this.defineErrorName("OutputValidationError");
  }

  /** What was wrong with the last answer (at most 20 problems). */
  readonly issues: readonly string[];
  /** The last answer's text. */
  readonly answer: string;

  constructor(issues: readonly string[], answer: string) {
    super(
      `the model's answer does not match the response format, also after one repair request: ${issues.join("; ")}; ` +
        `simplify the schema, describe its fields, or use a model with native structured output`,
    );
    this.issues = issues;
    this.answer = answer;
  }
}

/** One model-tool loop made `maxIterations` requests without the model finishing (model behaviour). */
export class MaxIterationsExceededError extends ModelBehaviorError {
  static {
    this.defineErrorName("MaxIterationsExceededError");
  }

  /** The limit that was reached. */
  readonly maxIterations: number;

  constructor(maxIterations: number) {
    super(
      `the model-tool loop made ${maxIterations} requests without a final answer (maxIterations ${maxIterations}); ` +
        `raise maxIterations if the task really needs more steps, or give the model fewer, clearer tools`,
    );
    this.maxIterations = maxIterations;
  }
}

/**
 * A run and the runs nested in it made more model requests than the shared
 * `maxSteps` budget allows (model behaviour). Nesting can never multiply
 * `maxIterations`.
 */
export class MaxStepsExceededError extends ModelBehaviorError {
  static {
    this.defineErrorName("MaxStepsExceededError");
  }

  /** The shared budget that was reached. */
  readonly maxSteps: number;

  constructor(maxSteps: number) {
    super(
      `the run and the runs nested in it reached the shared budget of ${maxSteps} model requests (maxSteps); ` +
        `the whole run was stopped — raise maxSteps on the Runtime if this much work is intended`,
    );
    this.maxSteps = maxSteps;
  }
}

/**
 * A Context provider threw while a model request was being prepared; that
 * request is not sent. A {@link UsageError}: the provider is the
 * application's code (its `cause` is what it threw).
 */
export class ContextProviderError extends UsageError {
  static {
    this.defineErrorName("ContextProviderError");
  }

  /** The name the provider was registered under. */
  readonly providerName: string;

  constructor(providerName: string, cause: unknown) {
    super(`Context provider '${providerName}' failed: ${errorMessage(cause)}`, { cause });
    this.providerName = providerName;
  }
}

/**
 * The model-provider configuration is invalid, e.g. `REIN_PROVIDER` names an
 * unknown provider or one whose key is not set: a {@link UsageError}, not a
 * `ProviderError` (nothing failed at a provider; nothing was sent).
 * When no provider is configured at all, the error is its subclass
 * {@link MissingProviderError}.
 *
 * It lives in `@rein/core` so that {@link MissingProviderError} can extend
 * it; `@rein/providers` and `rein` re-export the same class.
 *
 * @example
 * ```ts
 * try { createProvider(); } catch (error) {
 *   if (ProviderConfigError.isInstance(error)) console.error(error.message);
 * }
 * ```
 */
export class ProviderConfigError extends UsageError {
  static {
    this.defineErrorName("ProviderConfigError");
  }

  /** The provider the configuration concerns; `"none"` when it names none. */
  readonly provider: string;
  /** The environment variable that would fix it (`"OPENAI_API_KEY"`), when one would. */
  readonly variable: string | undefined;

  constructor(message: string, options?: { provider?: string; variable?: string; cause?: unknown }) {
    super(message, options);
    this.provider = options?.provider ?? "none";
    this.variable = options?.variable;
  }
}

/**
 * No model provider is configured for a runtime that needs one. The one
 * "no provider" error: the Runtime throws it when it has no provider and no
 * default factory, and `createProvider()` (from `@rein/providers`, the
 * default factory of `rein`) throws it when the environment names none. A
 * {@link ProviderConfigError}, so `ProviderConfigError.isInstance` checks
 * keep matching it.
 *
 * @example
 * ```ts
 * err.message; // "No model provider configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY (with the `rein` package), or pass { provider } to the Runtime"
 * ```
 */
export class MissingProviderError extends ProviderConfigError {
  static {
    this.defineErrorName("MissingProviderError");
  }

  /**
   * @param message - what to set; the default suits a bare `@rein/core`
   *   Runtime, and `createProvider()` passes one that names its variables.
   */
  constructor(
    message = "No model provider configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY (with the `rein` package), " +
      "or pass { provider } to the Runtime",
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Arguments given to a tool do not match its schema (model behaviour: the model wrote them). */
export class ToolArgumentsError extends ModelBehaviorError {
  static {
    this.defineErrorName("ToolArgumentsError");
  }

  /** The tool whose schema was not met. */
  readonly toolName: string;
  /** One line per problem, each naming the argument path. */
  readonly problems: readonly string[];

  constructor(toolName: string, problems: readonly string[]) {
    super(`invalid arguments for tool '${toolName}': ${problems.join("; ")}`);
    this.toolName = toolName;
    this.problems = problems;
  }
}

/**
 * A `requiresApproval` tool call was not approved: the agent's
 * `approveToolCall` said no, or the agent has none (`approverConfigured` is
 * then false, and the message says so).
 *
 * A {@link ModelBehaviorError}: a policy refused an action the model chose,
 * and the model gets the refusal as its tool result and can do something
 * else; adjust the prompt or the approval policy if it keeps asking. It is
 * not a `GuardError`, so a denial never counts toward the guards'
 * refusal-then-abort rule. (Without any approver configured, the fix is in
 * the code: give the agent an `approveToolCall`.)
 *
 * @example
 * ```ts
 * err.message; // "calling 'deploy' requires approval and it was not approved"
 * ```
 */
export class ToolApprovalError extends ModelBehaviorError {
  static {
    this.defineErrorName("ToolApprovalError");
  }

  /** The tool whose call was not approved. */
  readonly toolName: string;
  /** False when the agent has no `approveToolCall`, so no call of the tool can ever be approved. */
  readonly approverConfigured: boolean;

  constructor(toolName: string, options?: { approverConfigured?: boolean; cause?: unknown }) {
    const approverConfigured = options?.approverConfigured ?? true;
    super(
      `calling '${toolName}' requires approval and it was not approved` +
        (approverConfigured ? "" : " (no approveToolCall was configured on the agent)"),
      options,
    );
    this.toolName = toolName;
    this.approverConfigured = approverConfigured;
  }
}

/** A Context names a head node its session does not hold (a usage error). */
export class ContextHeadError extends UsageError {
  static {
    this.defineErrorName("ContextHeadError");
  }

  /** The head node id the Context named. */
  readonly headId: string;
  /** The session that does not hold it. */
  readonly sessionId: string;

  constructor(headId: string, sessionId: string) {
    super(`Context head '${headId}' does not exist.`);
    this.headId = headId;
    this.sessionId = sessionId;
  }
}

/**
 * A call would record to the session of the call it runs in through a
 * different writer: two writers on one session would interleave sequence
 * numbers and heads (a usage error).
 */
export class ContextStoreError extends UsageError {
  static {
    this.defineErrorName("ContextStoreError");
  }

  /** The session both writers would record to. */
  readonly sessionId: string;

  constructor(sessionId: string) {
    super(
      `This call's Context records to session '${sessionId}' through a different writer than the call it runs in; ` +
        `one session takes one writer at a time — use Context.current() (or derive() from it), or give the nested agent its own session`,
    );
    this.sessionId = sessionId;
  }
}
