import type { Agent } from "./agent";
import type { AgentOptions } from "./agent-options";
import { AGENT_CLASS_BRAND } from "./agent-brand";

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
