import "reflect-metadata";
import type { MethodOptions } from "./method-options";

const METADATA_KEY = "rein:methodOptions";

/**
 * Decorator form of `static methodOptions`: `@method({ tool: true, description })`.
 * Needs `experimentalDecorators` (and `emitDecoratorMetadata` to type derived
 * tool parameters). When both forms name a method, the static map wins key by key.
 *
 * @example
 * ```ts
 * class Wiki extends Agent {
 *   @method({ tool: true, description: "Search the wiki." })
 *   async search(query: string, limit = 5) { ... }
 * }
 * ```
 */
export function method(options: MethodOptions = {}): MethodDecorator {
  return (target, propertyKey) => {
    Reflect.defineMetadata(METADATA_KEY, options, target, propertyKey);
  };
}

/** Options given with {@link method} on `target[propertyKey]`, if any. */
export function decoratedOptions(target: object, propertyKey: string): MethodOptions | undefined {
  return Reflect.getOwnMetadata(METADATA_KEY, target, propertyKey) as MethodOptions | undefined;
}
