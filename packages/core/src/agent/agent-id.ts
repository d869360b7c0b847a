import { UsageError } from "@rein/guard";

/**
 * Two Agent classes declare one durable id (`static id`): a run recorded
 * under it could not say which class resumes it. Thrown when the second
 * class is first used (constructed, or listed as a server entry).
 * @example
 * ```ts
 * class A extends Agent { static id = "billing.Pipeline"; }
 * class B extends Agent { static id = "billing.Pipeline"; }
 * new A();
 * new B(); // DuplicateAgentIdError: two Agent classes have the durable id 'billing.Pipeline': A and B
 * ```
 */
export class DuplicateAgentIdError extends UsageError {
  static {
    this.defineErrorName("DuplicateAgentIdError");
  }

  /** The id both classes declare. */
  readonly id: string;
  /** The class names: the one registered first, then the one refused. */
  readonly classes: readonly [string, string];

  constructor(id: string, first: string, second: string) {
    super(`two Agent classes have the durable id '${id}': ${first} and ${second} — give each its own static id`);
    this.id = id;
    this.classes = [first, second];
  }
}

/**
 * The durable id of an Agent class: its own `static id` when it declares
 * one, else its class name. Runs of its resumable methods are recorded as
 * `<id>.<method>`, and a run is resumed by the class whose id it names, so
 * an explicit id survives minification (a bundler renames classes to `t`)
 * and tells apart two classes of one name. A subclass does not inherit its
 * parent's id.
 * @default the class name
 * @example
 * ```ts
 * class Pipeline extends Agent {
 *   static id = "billing.Pipeline";
 * }
 * agentClassId(Pipeline); // "billing.Pipeline"
 * ```
 */
export function agentClassId(agentClass: Function): string {
  const own = Object.getOwnPropertyDescriptor(agentClass, "id");
  if (own !== undefined && "value" in own && own.value !== undefined) {
    if (typeof own.value !== "string" || own.value === "" || own.value.trim() !== own.value) {
      throw new TypeError(
        `Invalid static id of ${agentClass.name || "an Agent class"}: expected a non-empty string without surrounding spaces (e.g. "billing.Pipeline"), got ${JSON.stringify(own.value)}`,
      );
    }
    return own.value;
  }
  return agentClass.name || "AnonymousAgent";
}

/** Classes by the explicit ids they declare, held weakly: a class that is gone frees its id. */
const explicitIds = new Map<string, WeakRef<Function>>();

/**
 * Registers the explicit id of `agentClass` (if it declares one) and
 * returns its durable id. @internal
 * @throws {DuplicateAgentIdError} when another live class declares the same id
 */
export function registerAgentClassId(agentClass: Function): string {
  const id = agentClassId(agentClass);
  if (!Object.prototype.hasOwnProperty.call(agentClass, "id")) return id;
  const known = explicitIds.get(id)?.deref();
  if (known !== undefined && known !== agentClass) throw new DuplicateAgentIdError(id, known.name || "AnonymousAgent", agentClass.name || "AnonymousAgent");
  explicitIds.set(id, new WeakRef(agentClass));
  return id;
}
