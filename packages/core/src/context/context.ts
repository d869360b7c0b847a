import { errorMessage, withFrameData, ContextProviderError } from "@rein/guard";
import type { TextBlock } from "../model/content";
import { currentScope, deriveScope } from "../scope/call-scope";
import { SessionNodeWriter, ensureSession, optionSchema, type SessionNode, type SessionStoreLike } from "@rein/session";

const { anyOf, arrayOf, checkArgument, hasMethods, instanceOf, isObject, nonEmptyString, optionsSchema, rule, show } = optionSchema;
type Rule = optionSchema.Rule;

/** Setting a name to `DELETE` hides the value inherited from a parent Context. */
export const DELETE: unique symbol = Symbol.for("rein.context.delete");

/**
 * A value computed on every model request (sync or async). It receives the
 * Context the request is made with.
 */
export type ContextProvider = (context: Context) => unknown;

/**
 * Which history a model request sees: `"dag"` (what the session graph makes
 * visible), `"current_call"` (only what ran inside the current call),
 * `false` (none), or a predicate applied after DAG visibility.
 * @default "dag"
 */
export type ContextHistoryFilter = "dag" | "current_call" | false | ((node: SessionNode, context: Context) => boolean);

/** Options of the {@link Context} constructor. */
export interface ContextOptions {
  /** Inherit names, providers and rules from this Context. */
  parent?: Context;
  /** Values computed on every model request. */
  providers?: Readonly<Record<string, ContextProvider>>;
  /** @default inherited, else "dag" */
  historyFilter?: ContextHistoryFilter;
  /** The call identity (code node id) this Context belongs to. */
  callId?: string;
  /** Where calls made with this Context are recorded; the caller owns (and closes) its store. */
  store?: SessionNodeWriter;
  /** Start the next call after this node (branching); `undefined` continues from the current head. */
  headId?: string;
}

/** Options of {@link Context.forSession}. */
export interface ForSessionOptions {
  headId?: string;
  blocks?: Readonly<Record<string, unknown>>;
  providers?: Readonly<Record<string, ContextProvider>>;
  historyFilter?: ContextHistoryFilter;
}

// The schema of ContextOptions and ForSessionOptions lives beside the types (STYLE: an options type and its schema in one file).

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

type Blocks = Readonly<Record<string, unknown>> | Iterable<readonly [string, unknown]>;

/**
 * Named content shared across calls and rendered into the current user turn
 * of every model request (never into the system prompt, so the cached
 * prefix stays constant). A mutable map with inheritance: a derived
 * Context sees its parent's names until it sets or `DELETE`s them.
 *
 * @example
 * ```ts
 * const context = new Context({ style: "Answer in one sentence." }, {
 *   providers: { now: () => new Date().toISOString() },
 * });
 * const researcher = new Researcher({ context });
 * ```
 */
export class Context implements Iterable<[string, unknown]> {
  /** The parent this Context inherits from. */
  readonly parent: Context | undefined;
  /** The call identity (code node id) of the scope this Context belongs to. */
  readonly callId: string | undefined;
  private readonly own = new Map<string, unknown>();
  private readonly ownProviders: ReadonlyMap<string, ContextProvider>;
  private readonly ownHistoryFilter: ContextHistoryFilter | undefined;
  private readonly ownStore: SessionNodeWriter | undefined;
  private readonly ownHeadId: string | undefined;

  constructor(blocks?: Blocks, options: ContextOptions = {}) {
    checkContextArguments(blocks, options);
    this.parent = options.parent;
    this.callId = options.callId;
    this.ownProviders = new Map(Object.entries(options.providers ?? {}));
    this.ownHistoryFilter = options.historyFilter;
    this.ownStore = options.store;
    this.ownHeadId = options.headId;
    if (blocks !== undefined) {
      const entries = Symbol.iterator in blocks ? blocks : Object.entries(blocks);
      for (const [name, value] of entries as Iterable<readonly [string, unknown]>) this.set(name, value);
    }
  }

  /**
   * A Context bound to a session of `store`: calls made with it are recorded
   * there and continue from `headId` (or the session's head when each call
   * starts). Creates the session when it does not exist. Every Context on
   * one (store, session) in a process shares one writer, so Contexts made
   * per request can be used in any order.
   * @example
   * ```ts
   * const context = Context.forSession(store, request.sessionId);
   * await new Researcher({ context }).research(request.question);
   * ```
   */
  static forSession(
    store: SessionStoreLike | SessionNodeWriter,
    sessionId: string,
    options: ForSessionOptions = {},
  ): Context {
    checkForSessionArguments(store, sessionId, options);
    const writer = resolveWriter(store, sessionId);
    return new Context(options.blocks, {
      store: writer,
      headId: options.headId,
      providers: options.providers,
      historyFilter: options.historyFilter,
    });
  }

  /** The Context bound to the current call, if any. */
  static current(): Context | undefined {
    return currentScope()?.context;
  }

  /** The writer calls are recorded to (own or inherited). */
  get store(): SessionNodeWriter | undefined {
    return this.ownStore ?? this.parent?.store;
  }

  /** The session recorded to, when a store is set. */
  get sessionId(): string | undefined {
    return this.store?.sessionId;
  }

  /** The node the next call starts after, when set (own or inherited). */
  get headId(): string | undefined {
    return this.ownHeadId ?? this.parent?.headId;
  }

  /** The history rule (own, inherited, else `"dag"`). */
  get historyFilter(): ContextHistoryFilter {
    return this.ownHistoryFilter ?? this.parent?.historyFilter ?? "dag";
  }

  /** Providers by name, parents' first, own ones overriding. */
  get providers(): ReadonlyMap<string, ContextProvider> {
    if (this.parent === undefined) return this.ownProviders;
    return new Map([...this.parent.providers, ...this.ownProviders]);
  }

  get(name: string): unknown {
    if (this.own.has(name)) {
      const value = this.own.get(name);
      return value === DELETE ? undefined : value;
    }
    return this.parent?.get(name);
  }

  has(name: string): boolean {
    if (this.own.has(name)) return this.own.get(name) !== DELETE;
    return this.parent?.has(name) ?? false;
  }

  /** Sets a name; setting `DELETE` hides an inherited value. */
  set(name: string, value: unknown): this {
    if (typeof name !== "string" || name === "") throw new TypeError("Context names must be non-empty strings");
    this.own.set(name, value);
    return this;
  }

  /** Removes a name (also hiding an inherited one). Returns whether it was visible. */
  delete(name: string): boolean {
    const had = this.has(name);
    if (this.parent?.has(name)) this.own.set(name, DELETE);
    else this.own.delete(name);
    return had;
  }

  /** Visible names: inherited ones first, in insertion order. */
  keys(): IterableIterator<string> {
    return this.visible().keys();
  }

  entries(): IterableIterator<[string, unknown]> {
    return this.visible().entries();
  }

  [Symbol.iterator](): IterableIterator<[string, unknown]> {
    return this.entries();
  }

  get size(): number {
    return this.visible().size;
  }

  /** A child Context: sees this one's names until it overrides them; its writes never reach this one. */
  derive(options: Omit<ContextOptions, "parent"> = {}): Context {
    return new Context(undefined, { callId: this.callId, ...options, parent: this });
  }

  /**
   * A new Context with `other`'s visible content and its explicitly set rules
   * (providers, history filter, store, head) laid over this one. The call
   * identity stays this Context's.
   */
  merge(other: Context): Context {
    const merged = new Context(other.entries(), {
      parent: this,
      callId: this.callId,
      providers: Object.fromEntries(other.ownProviders),
      historyFilter: other.ownHistoryFilter,
      store: other.ownStore,
      headId: other.ownHeadId,
    });
    return merged;
  }

  /**
   * Wraps `fn` so it runs with this Context bound (`Context.current()` and
   * every scoped call and model request inside it use this Context).
   */
  bind<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
    // The call in which bind() is called is captured now (like AsyncResource.bind): a callback run later
    // from an event emitter still belongs to that call, its run, its signal and its cancellation.
    const captured = currentScope();
    return (...args: A): R => {
      const scope = captured ?? currentScope();
      const store = this.store ?? scope?.writer;
      // Under an `expose: "hidden"` call, bound work on the silenced store records nothing either;
      // neither does work of a run that was cancelled meanwhile.
      const silenced = store !== undefined && (scope?.suppressed === store || scope?.region?.closed === true);
      // Everything else of the captured call goes on (reach, agent nesting, run ledger, trace): bound work is still the call's.
      const bound = deriveScope(scope);
      bound.context = this;
      bound.writer = silenced ? undefined : store;
      bound.cursor = !silenced && scope?.cursor?.writer === store ? scope?.cursor : undefined;
      return withFrameData(bound, fn, ...args);
    };
  }

  /**
   * The blocks a model request shows: every visible value, then every
   * provider's value computed now, each as a tagged text block. A provider
   * that throws fails the request with {@link ContextProviderError}.
   */
  async render(options: { includeStatic?: boolean } = {}): Promise<TextBlock[]> {
    const blocks: TextBlock[] = [];
    if (options.includeStatic !== false) {
      for (const [name, value] of this.entries()) {
        if (!this.providers.has(name)) pushBlock(blocks, name, value);
      }
    }
    for (const [name, provider] of this.providers) {
      try {
        pushBlock(blocks, name, await provider(this));
      } catch (error) {
        throw new ContextProviderError(name, error);
      }
    }
    return blocks;
  }

  private visible(): Map<string, unknown> {
    const result = this.parent ? this.parent.visible() : new Map<string, unknown>();
    for (const [name, value] of this.own) {
      if (value === DELETE) result.delete(name);
      else result.set(name, value);
    }
    return result;
  }
}

/** Adds block `name` as the model reads it; a value that is neither text nor JSON (a bigint, a function) is a `TypeError` naming it. */
function pushBlock(blocks: TextBlock[], name: string, value: unknown): void {
  if (value === undefined || value === null || value === DELETE) return;
  let text: string | undefined;
  try {
    text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  } catch (error) {
    throw new TypeError(`Context block '${name}' cannot be shown to the model (${errorMessage(error)}): give it a string or a JSON value`, { cause: error });
  }
  if (text === undefined) throw new TypeError(`Context block '${name}' is a ${typeof value}, which cannot be shown to the model: give it a string or a JSON value`);
  blocks.push({ type: "text", text: `<context name="${escapeAttribute(name)}">\n${text}\n</context>` });
}

const ATTRIBUTE_ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", '"': "&quot;", "<": "&lt;", ">": "&gt;" };

/** A block name as an XML attribute value: a name cannot close the tag or forge another block. */
function escapeAttribute(name: string): string {
  return name.replace(/[&"<>]/g, (char) => ATTRIBUTE_ESCAPES[char]!);
}

/**
 * The session's writer: the one given, or the one in use for (store,
 * session) in this process — `new SessionNodeWriter` returns it — so every
 * Context on a session shares one queue, head and graph.
 */
function resolveWriter(store: SessionStoreLike | SessionNodeWriter, sessionId: string): SessionNodeWriter {
  if (store instanceof SessionNodeWriter) {
    if (store.sessionId !== sessionId) {
      throw new TypeError(
        `Context.forSession was given a writer for session '${store.sessionId}' but asked for '${sessionId}'; pass the store instead`,
      );
    }
    return store;
  }
  ensureSession(store, sessionId);
  return new SessionNodeWriter(store, sessionId);
}
