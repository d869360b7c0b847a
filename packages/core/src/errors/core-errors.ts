import { ReinError } from "@rein/guard";

/**
 * A scoped call was cancelled before or while it ran: a pre-invocation hook
 * threw it, or the caller's `AbortSignal` fired. The call's code node is
 * recorded as `cancelled`.
 */
export class CancelledError extends ReinError {
  constructor(message = "the call was cancelled", options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The model's answer to `agent.choose()` was not one of the offered options. */
export class DecisionError extends ReinError {
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

/** One model-tool loop made `maxIterations` requests without the model finishing. */
export class MaxIterationsExceededError extends ReinError {
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
 * `maxSteps` budget allows. Nesting can never multiply `maxIterations`.
 */
export class MaxStepsExceededError extends ReinError {
  readonly maxSteps: number;

  constructor(maxSteps: number) {
    super(
      `the run and the runs nested in it reached the shared budget of ${maxSteps} model requests (maxSteps); ` +
        `the whole run was stopped — raise maxSteps on the Runtime if this much work is intended`,
    );
    this.maxSteps = maxSteps;
  }
}

/** A Context provider threw while a model request was being prepared; that request is not sent. */
export class ContextProviderError extends ReinError {
  readonly providerName: string;

  constructor(providerName: string, cause: unknown) {
    super(`Context provider '${providerName}' failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.providerName = providerName;
  }
}

/** No model provider is configured for a runtime that needs one. */
export class MissingProviderError extends ReinError {
  constructor() {
    super(
      "No model provider configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY (with the `rein` package), " +
        "or pass { provider } to the Runtime",
    );
  }
}

/** Arguments given to a tool do not match its schema. */
export class ToolArgumentsError extends ReinError {
  readonly toolName: string;
  /** One line per problem, each naming the argument path. */
  readonly problems: readonly string[];

  constructor(toolName: string, problems: readonly string[]) {
    super(`invalid arguments for tool '${toolName}': ${problems.join("; ")}`);
    this.toolName = toolName;
    this.problems = problems;
  }
}

/** A Context names a head node its session does not hold. */
export class ContextHeadError extends ReinError {
  readonly headId: string;
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
 * numbers and heads.
 */
export class ContextStoreError extends ReinError {
  readonly sessionId: string;

  constructor(sessionId: string) {
    super(
      `This call's Context records to session '${sessionId}' through a different writer than the call it runs in; ` +
        `one session takes one writer at a time — use Context.current() (or derive() from it), or give the nested agent its own session`,
    );
    this.sessionId = sessionId;
  }
}
