import { Context, type ContextOptions, type ForSessionOptions } from "../context/context";
import { SessionNodeWriter } from "../session/session-node-writer";
import {
  anyOf,
  arrayOf,
  checkArgument,
  hasMethods,
  instanceOf,
  isObject,
  nonEmptyString,
  optionsSchema,
  rule,
  show,
  type Rule,
} from "./option-schema";

const HISTORY_FILTER_HINT = 'use "dag", "current_call", false, or a function (node, context) => boolean';

/** `"dag" | "current_call" | false | (node, context) => boolean`. */
const historyFilter: Rule = {
  expected: '"dag", "current_call", false, or a function (node, context) => boolean',
  check: (value) =>
    value === "dag" || value === "current_call" || value === false || typeof value === "function"
      ? undefined
      : { path: "", value, hint: HISTORY_FILTER_HINT },
};

/** `{ name: (context) => value }`; a wrong entry is reported by name. */
const providers: Rule = {
  expected: "an object of functions (context) => value",
  kind: "object",
  check(value) {
    if (!isObject(value)) return { path: "", value, hint: "expected an object of functions (context) => value" };
    for (const name in value) {
      if (!Object.hasOwn(value, name) || typeof value[name] === "function") continue;
      return { path: `[${show(name)}]`, value: value[name], hint: `Context provider '${name}' must be a function (context) => value` };
    }
    return undefined;
  },
};

/** Context content: `{ name: value }`, a Map, or an iterable of `[name, value]` pairs. */
const blocks: Rule = anyOf(
  [
    arrayOf(
      rule("a [name, value] pair", (value) => Array.isArray(value) && value.length === 2 && typeof value[0] === "string" && value[0] !== "", "array"),
      "an array of [name, value] pairs",
    ),
    rule("an object of named values", isObject, "object"),
  ],
  "an object of named values, a Map, or an iterable of [name, value] pairs",
);

const context = instanceOf(() => Context, "a Context");
const writer = instanceOf(() => SessionNodeWriter, "a SessionNodeWriter");

/** {@link ContextOptions}: the second argument of the `Context` constructor (and `derive`). */
export const contextOptionsSchema = optionsSchema<ContextOptions>("Context", {
  parent: context,
  providers,
  historyFilter,
  callId: nonEmptyString,
  store: writer,
  headId: nonEmptyString,
});

/** {@link ForSessionOptions}: the options of `Context.forSession`. */
export const forSessionOptionsSchema = optionsSchema<ForSessionOptions>("Context.forSession", {
  headId: nonEmptyString,
  blocks,
  providers,
  historyFilter,
});

const storeOrWriter = anyOf(
  [writer, hasMethods("a session store", "createSession", "hasSession", "getSession")],
  "a session store or a SessionNodeWriter",
);

/** Checks the arguments of the `Context` constructor. */
export function checkContextArguments(content: unknown, options: unknown): void {
  if (content !== undefined) checkArgument("Context", "blocks", blocks, content);
  contextOptionsSchema.parse(options);
}

/** Checks the arguments of `Context.forSession`. */
export function checkForSessionArguments(store: unknown, sessionId: unknown, options: unknown): void {
  checkArgument("Context.forSession", "store", storeOrWriter, store);
  checkArgument("Context.forSession", "sessionId", nonEmptyString, sessionId);
  forSessionOptionsSchema.parse(options);
}
