import { agentClassId, DuplicateAgentIdError, isAgentClass as isBrandedAgentClass, type Agent, type RunEventListener, type ToolApprover } from "rein";

/**
 * What a factory entry receives for one request: a listener for the run's
 * events (pass it as the runtime's `onEvent`), the request's cancellation
 * signal (pass it to `ask`/`stream` or read `currentSignal()`), and the run id.
 * @example
 * ```ts
 * const make = ({ onEvent }: EntryInit) => new Researcher({ runtime: new Runtime({ provider, onEvent }) });
 * ```
 */
export interface EntryInit {
  /** Receives every event of the run; feeds SSE and `usage`. */
  readonly onEvent: RunEventListener;
  /** Fires when the run is cancelled (`POST /v1/runs/:id/cancel`, or shutdown). */
  readonly signal: AbortSignal;
  /** The run's id (`X-Run-Id`). */
  readonly runId: string;
  /**
   * The server's approver (approvals over HTTP): pass it as the
   * `approveToolCall` of an agent whose `requiresApproval` tools a person
   * should answer through `POST /v1/runs/:id/approvals/:toolCallId`. A
   * class entry is constructed with it.
   */
  readonly approveToolCall?: ToolApprover;
}

/**
 * A factory building the object whose method an entry calls, once per request.
 * @example
 * ```ts
 * const research: EntryFactory = ({ onEvent }) => new Researcher({ runtime: new Runtime({ provider, onEvent }) });
 * ```
 */
export type EntryFactory = (init: EntryInit) => object;

/**
 * An `Agent` subclass constructed with no arguments, once per request.
 * @example
 * ```ts
 * const entries = { research: [Researcher, "research"] } satisfies Entries;
 * ```
 */
export type EntryClass = new () => Agent;

/**
 * One callable entry: `[AgentClass or factory, "methodName"]`. A class is
 * constructed per request (`new Class()`); a factory is called per request
 * with an {@link EntryInit}, so its runtime can report events (for SSE and
 * `usage`) and honour cancellation.
 * @example
 * ```ts
 * export const entries = { research: [Researcher, "research"] } satisfies Entries;
 * ```
 */
export type Entry = readonly [target: EntryClass | EntryFactory, method: string];

/**
 * The entries a server exposes, by name: only these are callable.
 * @example
 * ```ts
 * export const entries = { research: [Researcher, "research"], summarise: [makeSummariser, "summarise"] } satisfies Entries;
 * ```
 */
export type Entries = Readonly<Record<string, Entry>>;

/**
 * @internal checks `entries` at construction (a usage error, not a request
 * error): each `[AgentClass or factory, "method"]`, the method there, each
 * class's `static id` valid, and no two classes with one explicit id — the
 * server resumes a run by the class whose durable id it names, so two would
 * be ambiguous: a `DuplicateAgentIdError` at start, not a failed resume later.
 */
export function checkEntries(entries: unknown): asserts entries is Entries {
  if (typeof entries !== "object" || entries === null || Array.isArray(entries)) {
    throw new TypeError("createServer({ entries }): entries must be an object of name -> [AgentClass or factory, \"methodName\"]");
  }
  const explicitIds = new Map<string, Function>();
  for (const [name, entry] of Object.entries(entries)) {
    if (!Array.isArray(entry) || entry.length !== 2 || typeof entry[0] !== "function" || typeof entry[1] !== "string") {
      throw new TypeError(`createServer({ entries }): entries.${name} must be [AgentClass or factory, "methodName"]`);
    }
    if (isAgentClass(entry[0]) && typeof (entry[0].prototype as Record<string, unknown>)[entry[1]] !== "function") {
      throw new TypeError(`createServer({ entries }): entries.${name}: ${entry[0].name} has no method '${entry[1]}'`);
    }
    if (isAgentClass(entry[0]) && Object.prototype.hasOwnProperty.call(entry[0], "id")) {
      const id = agentClassId(entry[0]);
      const known = explicitIds.get(id);
      if (known !== undefined && known !== entry[0]) throw new DuplicateAgentIdError(id, known.name || "AnonymousAgent", entry[0].name || "AnonymousAgent");
      explicitIds.set(id, entry[0]);
    }
  }
}

/**
 * @internal true for an Agent subclass (constructed), false for a factory
 * (called). By the class brand, not `instanceof`: the module's classes may
 * come from another copy of `@rein/core` than this server's (its sources
 * beside the built server, or two installed versions).
 */
export function isAgentClass(target: EntryClass | EntryFactory | Function): target is EntryClass {
  return isBrandedAgentClass(target);
}

/** @internal the object an entry calls for one request. */
export function instantiate(entry: Entry, init: EntryInit): Record<string, unknown> {
  const [target] = entry;
  if (!isAgentClass(target)) return (target as EntryFactory)(init) as Record<string, unknown>;
  // An agent with an approver of its own keeps it (its constructor sets it); one without gets the server's.
  const construct = target as unknown as new (options?: { approveToolCall?: ToolApprover }) => Agent;
  return new construct(init.approveToolCall === undefined ? undefined : { approveToolCall: init.approveToolCall }) as unknown as Record<string, unknown>;
}
