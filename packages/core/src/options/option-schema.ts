/**
 * Core's names for the option-schema machinery, which lives in
 * `@rein/session` (`optionSchema`, packages/session/src/options/option-schema.ts)
 * so that the session stores, below core, validate their options with it
 * too. Re-exported here, not copied: core's option files import these names.
 * @internal
 */
import { optionSchema } from "@rein/session";

export type Problem = optionSchema.Problem;
export type ValueKind = optionSchema.ValueKind;
export type Rule = optionSchema.Rule;
export type Shape<T = Record<string, unknown>> = optionSchema.Shape<T>;
export type OptionsSchema<T> = optionSchema.OptionsSchema<T>;

export const {
  kindOf,
  isObject,
  rule,
  string,
  nonEmptyString,
  boolean,
  positiveInteger,
  positiveNumber,
  plainObject,
  func,
  oneOf,
  instanceOf,
  hasMethods,
  arrayOf,
  recordOf,
  anyOf,
  required,
  object,
  optionsSchema,
  checkArgument,
  problemMessage,
  show,
} = optionSchema;
