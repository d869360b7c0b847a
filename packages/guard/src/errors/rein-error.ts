const MARKER = Symbol.for("rein.error");

/** Options accepted by every {@link ReinError} constructor. */
export interface ReinErrorOptions {
  /** The error that led to this one, kept for logs and debuggers. */
  cause?: unknown;
}

/**
 * The base of every error Rein throws.
 *
 * `name` is always the concrete class name, and {@link ReinError.isInstance}
 * recognises errors even when two copies of a Rein package are loaded (where
 * `instanceof` fails).
 *
 * @example
 * ```ts
 * try { await agent.run(); } catch (error) {
 *   if (RecursionError.isInstance(error)) console.log(error.functionName);
 * }
 * ```
 */
export class ReinError extends Error {
  /** @internal cross-copy marker; see {@link ReinError.isInstance}. */
  readonly [MARKER] = true;

  constructor(message: string, options?: ReinErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
  }

  /**
   * True when `error` is an instance of this class (or a subclass), also
   * across duplicate copies of the package: the check falls back to comparing
   * class names along the prototype chain of a Rein-marked error.
   */
  static isInstance<T extends abstract new (...args: never[]) => ReinError>(
    this: T,
    error: unknown,
  ): error is InstanceType<T> {
    if (error instanceof this) return true;
    if (typeof error !== "object" || error === null) return false;
    if ((error as Record<symbol, unknown>)[MARKER] !== true) return false;
    for (let proto = Object.getPrototypeOf(error); proto; proto = Object.getPrototypeOf(proto)) {
      if (proto.constructor?.name === this.name) return true;
    }
    return false;
  }
}

/**
 * Base of the errors a guard raises when it refuses to enter a call
 * (recursion ceiling, cycle, chain depth and, later, reach). The runtime
 * treats every `GuardError` as a refusal it reports to the model once.
 */
export class GuardError extends ReinError {}
