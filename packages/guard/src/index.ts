/**
 * @rein/guard — the guard layer every Rein call runs inside: the call chain,
 * the recursion ceiling, cycle detection and the situational prefix.
 * @packageDocumentation
 */
export * from "./errors";
export * from "./chain";
export * from "./prompt";
