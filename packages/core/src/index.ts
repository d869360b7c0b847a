/**
 * @rein/core — Agent, Context, Runtime, tools, the Session DAG, and the
 * ModelProvider interface with its test double.
 * @packageDocumentation
 */
export * from "./model";
