import type { Agent, AgentOptions } from "./agent";

/**
 * The brand of Agent classes: a static property of `Agent`, so every
 * subclass inherits it. `Symbol.for` gives the same symbol to every copy of
 * `@rein/core` loaded in a process (two installed versions, or the built
 * package beside its sources), where `prototype instanceof Agent` fails: a
 * class from one copy is not a subclass of the other copy's `Agent`.
 */
export const AGENT_CLASS_BRAND: unique symbol = Symbol.for("rein.agent.class") as typeof AGENT_CLASS_BRAND;

/** An Agent class, from any copy of `@rein/core`: constructed with `new`, never called. */
export type AgentClass = new (options?: AgentOptions) => Agent<unknown>;

/**
 * True for `Agent` and every subclass of it, whichever copy of `@rein/core`
 * defined them; false for anything else (a factory function, a plain class,
 * an instance).
 *
 * @example
 * ```ts
 * import { Agent, isAgentClass } from "rein";
 * class Researcher extends Agent {}
 * isAgentClass(Researcher); // true
 * isAgentClass(() => new Researcher()); // false: a factory
 * ```
 */
export function isAgentClass(value: unknown): value is AgentClass {
  return typeof value === "function" && (value as unknown as { readonly [AGENT_CLASS_BRAND]?: unknown })[AGENT_CLASS_BRAND] === true;
}
