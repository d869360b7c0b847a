/**
 * @rein/providers — adapters from Rein's ModelProvider interface to the
 * official Anthropic and OpenAI SDKs.
 * @packageDocumentation
 */
export {};
