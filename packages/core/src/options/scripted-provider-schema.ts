import type { ScriptedProviderOptions } from "../model/scripted-provider";
import { arrayOf, boolean, checkArgument, nonEmptyString, oneOf, optionsSchema, rule } from "./option-schema";

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
