/**
 * The options of `new ScriptedProvider(turns, options)` and their schema, in
 * one file: scripted-provider.ts imports both, and nothing here imports back.
 */
import { optionSchema } from "@rein/session";

const { arrayOf, boolean, checkArgument, nonEmptyString, oneOf, optionsSchema, rule } = optionSchema;

/** Options of `ScriptedProvider`. */
export interface ScriptedProviderOptions {
  /** Model id reported in responses. @default "scripted" */
  modelId?: string;
  /**
   * What to do once every turn was played: `"error"` throws, `"repeat-last"`
   * plays the last turn again forever (a model stuck in a habit).
   * @default "error"
   */
  whenExhausted?: "error" | "repeat-last";
  /**
   * Keep a deep copy of every request in `ScriptedProvider.requests`.
   * Turn it off where nobody reads them (benchmarks, long soak tests): each
   * copy costs a `structuredClone` of the whole conversation, and they pile
   * up for the provider's lifetime. `ScriptedProvider.requestCount`
   * still counts.
   * @default true
   */
  recordRequests?: boolean;
}

/** {@link ScriptedProviderOptions}: the second argument of `new ScriptedProvider(turns, options)`. */
export const scriptedProviderOptionsSchema = optionsSchema<ScriptedProviderOptions>("ScriptedProvider", {
  modelId: nonEmptyString,
  whenExhausted: oneOf("error", "repeat-last"),
  recordRequests: boolean,
});

const turn = rule(
  "a turn (a string, an Error, { text?, toolCalls?, stopReason?, usage? } or a function of the request)",
  (value) => typeof value === "string" || typeof value === "function" || (typeof value === "object" && value !== null && !Array.isArray(value)),
);
const turns = arrayOf(turn, "an array of scripted turns");

/** Checks the arguments of the `ScriptedProvider` constructor. */
export function checkScriptedProviderArguments(scriptedTurns: unknown, options: unknown): void {
  checkArgument("ScriptedProvider", "turns", turns, scriptedTurns);
  scriptedProviderOptionsSchema.parse(options);
}
