/**
 * The brand of Agent classes: a static property of `Agent`, so every
 * subclass inherits it. `Symbol.for` gives the same symbol to every copy of
 * `@rein/core` loaded in a process (two installed versions, or the built
 * package beside its sources), where `prototype instanceof Agent` fails: a
 * class from one copy is not a subclass of the other copy's `Agent`.
 */
export const AGENT_CLASS_BRAND: unique symbol = Symbol.for("rein.agent.class") as typeof AGENT_CLASS_BRAND;
