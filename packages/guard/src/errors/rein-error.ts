/** Options accepted by every {@link ReinError} constructor. */
export interface ReinErrorOptions {
  /** The error that led to this one, kept for logs and debuggers. */
  cause?: unknown;
}

/** The marker symbol of each class that declared its name with `defineErrorName`, by class. */
const classMarkers = new WeakMap<object, symbol>();

/**
 * The base of every error Rein throws.
 *
 * Each class declares its name explicitly (`static { this.defineErrorName("RecursionError"); }`),
 * so `error.name` stays right after a bundler renames the class to `t`. That
 * declaration also puts the marker `Symbol.for("rein.error.<name>")` on the
 * class's prototype, so an error carries the markers of its class and of all
 * its ancestors, and {@link ReinError.isInstance} recognises errors from a
 * duplicate copy of a Rein package (where `instanceof` fails) without ever
 * comparing constructor names.
 *
 * Every Rein error belongs to one family, by whose fault it is:
 * {@link UsageError} (the developer's code or configuration),
 * {@link ModelBehaviorError} (what the model did) or
 * {@link SystemFailureError} (a provider, the network, storage). Only
 * `CancelledError` (re-exported by `@rein/core`) sits directly under `ReinError`.
 *
 * @example
 * ```ts
 * try { await agent.run(); } catch (error) {
 *   if (RecursionError.isInstance(error)) console.log(error.functionName);
 *   else if (SystemFailureError.isInstance(error)) alertOnCall(error);
 * }
 * ```
 */
export class ReinError extends Error {
  static {
    this.defineErrorName("ReinError");
  }

  constructor(message: string, options?: ReinErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    // An own, enumerable copy of the class's declared name (from the prototype), as
    // `this.name = …` always gave: JSON.stringify and object spread keep it.
    this.name = Object.getPrototypeOf(this).name as string;
  }

  /**
   * Declares the explicit name of an error class; call it once, in the
   * class's static block, with a name unique among Rein errors (prefix your
   * own, e.g. `"MyAppQuotaError"`). It sets `name` on the class's prototype
   * (so every instance reports it, whatever a minifier calls the class) and
   * the marker `Symbol.for("rein.error." + name)` that {@link ReinError.isInstance}
   * checks. A subclass that does not call it inherits its parent's name, and
   * its own `isInstance` falls back to `instanceof`.
   *
   * @example
   * ```ts
   * class QuotaError extends UsageError {
   *   static {
   *     this.defineErrorName("MyAppQuotaError");
   *   }
   * }
   * ```
   */
  protected static defineErrorName(this: abstract new (...args: never[]) => ReinError, name: string): void {
    const marker = Symbol.for(`rein.error.${name}`);
    Object.defineProperty(this.prototype, "name", { value: name, writable: true, configurable: true });
    Object.defineProperty(this.prototype, marker, { value: true });
    classMarkers.set(this, marker);
  }

  /**
   * True when `error` is an instance of this class or of a subclass, also
   * when it was built by a duplicate copy of the package: it checks the
   * class's `Symbol.for("rein.error.<name>")` marker, never constructor names.
   * For a subclass that declared no name of its own, it is `instanceof`.
   */
  static isInstance<T extends abstract new (...args: never[]) => ReinError>(
    this: T,
    error: unknown,
  ): error is InstanceType<T> {
    const marker = classMarkers.get(this);
    if (marker === undefined) return error instanceof this;
    return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[marker] === true;
  }
}

/**
 * The developer's code or configuration is wrong: a missing or invalid
 * provider configuration, a Context that names a head or writer its session
 * cannot take, a Context provider that throws. Retrying the same call fails
 * the same way; fix the code or the configuration the message names.
 */
export class UsageError extends ReinError {
  static {
    this.defineErrorName("UsageError");
  }
}

/**
 * The model's behaviour stopped or refused the work: a guard refusal
 * (recursion, cycles, chain depth), a tool loop, an unknown tool, invalid
 * tool arguments, an invalid choice, too many requests without an answer.
 * Nothing is broken: adjust the prompt, the tools or the limits (or accept
 * the refusal; the model was told).
 */
export class ModelBehaviorError extends ReinError {
  static {
    this.defineErrorName("ModelBehaviorError");
  }
}

/**
 * Something outside the program's logic failed: a model provider (network,
 * rate limit, overload, credentials) or the session store (file, database).
 * Retry when the subclass says it may help (`RateLimitError`,
 * `OverloadedError`), otherwise alert whoever runs the system.
 */
export class SystemFailureError extends ReinError {
  static {
    this.defineErrorName("SystemFailureError");
  }
}

/**
 * Base of the errors a guard raises when it refuses to enter a call
 * (recursion ceiling, cycle, chain depth and, later, reach): model
 * behaviour. The runtime treats every `GuardError` a tool throws as a refusal
 * it reports to the model once; the second one ends the run.
 */
export class GuardError extends ModelBehaviorError {
  static {
    this.defineErrorName("GuardError");
  }
}
