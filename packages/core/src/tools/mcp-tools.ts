import { errorMessage, type Frame, McpToolError } from "@rein/guard";
import type { JsonSchema } from "../model/model-provider";
import { enterFunctionScope } from "../scope/enter-scope";
import { resolveSchema } from "./schema";
import { validateArguments, type Tool } from "./tool";
import type { ToolExecuteOptions } from "./tool-definition";
import { toolValue } from "./mcp-tool-result";

/**
 * A tool as an MCP server lists it (`tools/list`): what {@link mcpTools}
 * reads. The `Tool` type of `@modelcontextprotocol/sdk` fits it.
 */
export interface McpToolDescription {
  readonly name: string;
  readonly description?: string;
  /** The JSON Schema of the tool's arguments: passed to the model as it is. */
  readonly inputSchema: object;
}

/**
 * The part of an MCP client {@link mcpTools} uses. A `Client` of
 * `@modelcontextprotocol/sdk` (connected over stdio, streamable HTTP or any
 * other transport) fits it; Rein does not depend on the SDK itself.
 */
export interface McpClientLike {
  listTools(params?: { cursor?: string }, options?: { signal?: AbortSignal }): Promise<{ readonly tools: readonly McpToolDescription[]; readonly nextCursor?: string }>;
  /** Resolves with the server's `CallToolResult` (checked at run time). */
  callTool(params: { name: string; arguments?: Record<string, unknown> }, resultSchema?: undefined, options?: { signal?: AbortSignal }): Promise<object>;
  /** Where the `notifications/tools/list_changed` handler is installed (the SDK's `setNotificationHandler`). */
  setNotificationHandler(schema: never, handler: (notification: { method: string }) => void | Promise<void>): void;
  /** The client's transport error callback: mcpTools chains its own before the one set. */
  onerror?: ((error: Error) => void) | undefined;
}

/**
 * Options of {@link mcpTools}.
 * @example
 * ```ts
 * const tools = await mcpTools(client, { exclude: ["delete_repository"] });
 * ```
 */
export interface McpToolsOptions {
  /** Only these tools of the server (by its names). @default every tool */
  readonly include?: readonly string[];
  /** Leave these tools out (applied after `include`). @default none */
  readonly exclude?: readonly string[];
  /**
   * The most `tools/list` pages read per listing: a server that always
   * answers another `nextCursor` is read this far, then the listing stops
   * with a warning naming the bound. @default 100
   */
  readonly maxPages?: number;
  /** The most tools read per listing; the rest are left out with a warning naming the bound. @default 10000 */
  readonly maxTools?: number;
  /** Receives each warning (a skipped tool, a bound reached). @default process.emitWarning */
  readonly onWarning?: (message: string) => void;
}

/** {@link McpToolsOptions.maxPages}'s default. */
export const MCP_MAX_PAGES = 100;
/** {@link McpToolsOptions.maxTools}'s default. */
export const MCP_MAX_TOOLS = 10_000;

/**
 * The tools of a Model Context Protocol server as Rein tools, under the
 * server's own names: each call runs through every guard (loop detection,
 * permissions, recursion and cycle checks, recording) like any other tool.
 *
 * - Schemas pass through: the model sees the server's `inputSchema`; Rein
 *   checks arguments against it before calling the server.
 * - Results: text content becomes the tool's text; images become image
 *   blocks the model sees (a {@link ToolContent}); `structuredContent` is
 *   kept on the recorded result (and shown as JSON when there is no other
 *   content); `isError: true`, and a call that fails (the server died, the
 *   connection closed), become an {@link McpToolError} the model sees as a
 *   tool error — the run goes on.
 * - The run's `AbortSignal` cancels the MCP request (the SDK sends
 *   `notifications/cancelled` to the server).
 * - The returned array is kept current: when the server announces
 *   `notifications/tools/list_changed`, the list is fetched again and the
 *   array's contents replaced. A run reads the array when it starts, so a
 *   change never alters the tools of a run already going (its requests keep
 *   one cache-stable prefix); the next run sees the new list. Pass the array
 *   itself as `tools` (a copy does not follow changes). Installing that
 *   handler replaces one set on the client before. When fetching the new
 *   list fails, the previous list stays.
 *
 * A tool whose name Rein cannot offer to a model (letters, digits, `_`, `-`,
 * at most 64), or whose name an earlier tool of the list already has, is
 * skipped with a process warning (`REIN_MCP_TOOL_SKIPPED`) naming it; the
 * other tools stay, on the first listing and on every refresh. Listing is
 * bounded by `maxPages` and `maxTools` (warning `REIN_MCP_LIST_BOUND`).
 * Errors the MCP client reports about a message it could not match (a
 * progress notification for an unknown token, a response to an unknown
 * request) fail no call; a transport error fails the calls in flight.
 *
 * @example
 * ```ts
 * import { Client } from "@modelcontextprotocol/sdk/client/index.js";
 * import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
 *
 * const client = new Client({ name: "my-app", version: "1.0.0" });
 * await client.connect(new StdioClientTransport({ command: "npx", args: ["some-mcp-server"] }));
 * const tools = await mcpTools(client, { include: ["search", "fetch_page"] });
 * const answer = await new Researcher({ tools }).ask("What changed in the release?");
 * ```
 */
export async function mcpTools(client: McpClientLike, options: McpToolsOptions = {}): Promise<Tool[]> {
  checkOptions(client, options);
  const source = new McpToolSource(client, options);
  await source.refresh();
  source.listen();
  return source.tools;
}

/** The live tool list of one client. */
class McpToolSource {
  readonly tools: Tool[] = [];
  /** Set while a refresh runs; another notification meanwhile asks for one more after it. */
  #refreshing: Promise<void> | undefined;
  #again = false;
  readonly #built = new Map<string, { description: McpToolDescription; tool: Tool }>();

  constructor(
    private readonly client: McpClientLike,
    private readonly options: McpToolsOptions,
  ) {}

  listen(): void {
    const schema = listChangedSchema();
    this.client.setNotificationHandler(schema as never, () => {
      this.requestRefresh();
    });
    // A transport error while calls are in flight (over HTTP: the stream that was to carry their
    // answers broke, e.g. the server died) fails those calls now instead of at the SDK's request timeout.
    const previous = this.client.onerror;
    this.client.onerror = (error: Error) => {
      if (!isStrayMessageError(error)) for (const fail of [...this.#inFlight]) fail(error);
      previous?.call(this.client, error);
    };
  }

  /** Rejecters of the calls waiting for the server's answer. */
  readonly #inFlight = new Set<(error: Error) => void>();

  /**
   * Calls the tool, failing the call when the client reports a transport
   * error before the answer. A call failed that way is also cancelled at the
   * server (the SDK sends `notifications/cancelled` if the connection still
   * stands), so a server that was only slow does not go on with it.
   */
  call(name: string, args: Record<string, unknown>, signal: AbortSignal | undefined): Promise<object> {
    return new Promise<object>((resolve, reject) => {
      const request = new AbortController();
      const onAbort = () => request.abort(signal?.reason);
      if (signal?.aborted === true) request.abort(signal.reason);
      else signal?.addEventListener("abort", onAbort, { once: true });
      const settle = () => {
        this.#inFlight.delete(fail);
        signal?.removeEventListener("abort", onAbort);
      };
      const fail = (error: Error) => {
        settle();
        request.abort(error);
        reject(error);
      };
      this.#inFlight.add(fail);
      let pending: Promise<object>;
      try {
        pending = this.client.callTool({ name, arguments: args }, undefined, { signal: request.signal });
      } catch (error) {
        pending = Promise.reject(error);
      }
      pending.then(
        (result) => {
          settle();
          resolve(result);
        },
        (error: unknown) => {
          settle();
          reject(error);
        },
      );
    });
  }

  requestRefresh(): void {
    if (this.#refreshing !== undefined) {
      this.#again = true;
      return;
    }
    this.#refreshing = this.refresh()
      .catch(() => undefined) // the previous list stays
      .finally(() => {
        this.#refreshing = undefined;
        if (this.#again) {
          this.#again = false;
          this.requestRefresh();
        }
      });
  }

  /** Lists the server's tools (every page) and replaces the array's contents in one step. */
  async refresh(): Promise<void> {
    const maxPages = this.options.maxPages ?? MCP_MAX_PAGES;
    const maxTools = this.options.maxTools ?? MCP_MAX_TOOLS;
    const listed: McpToolDescription[] = [];
    let cursor: string | undefined;
    let pages = 0;
    listing: do {
      const page = await this.client.listTools(cursor === undefined ? undefined : { cursor });
      pages += 1;
      // One push per tool: a spread of a 200,000-tool page would overflow the stack.
      for (const description of Array.isArray(page.tools) ? page.tools : []) {
        if (listed.length === maxTools) {
          this.warn("REIN_MCP_LIST_BOUND", `mcpTools: the MCP server lists more than maxTools = ${maxTools} tools; the rest are left out`);
          break listing;
        }
        listed.push(description);
      }
      cursor = page.nextCursor;
      if (cursor !== undefined && pages === maxPages) {
        this.warn("REIN_MCP_LIST_BOUND", `mcpTools: the MCP server still had a nextCursor after maxPages = ${maxPages} pages of tools/list; listing stopped there`);
        break;
      }
    } while (cursor !== undefined);
    const { include, exclude } = this.options;
    const tools: Tool[] = [];
    const seen = new Set<string>();
    for (const description of listed) {
      const name = (description as { name?: unknown } | null)?.name;
      if (typeof name === "string" && ((include !== undefined && !include.includes(name)) || (exclude ?? []).includes(name))) continue;
      if (typeof name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(name)) {
        this.warn(
          "REIN_MCP_TOOL_SKIPPED",
          `mcpTools: skipped the MCP tool named ${JSON.stringify(name)}: model APIs accept 1–64 letters, digits, '_' or '-' as a tool name`,
        );
        continue;
      }
      if (seen.has(name)) {
        this.warn("REIN_MCP_TOOL_SKIPPED", `mcpTools: skipped a second MCP tool named '${name}' (a model needs one tool per name; the first stays)`);
        continue;
      }
      seen.add(name);
      try {
        tools.push(this.toolFor(description));
      } catch (error) {
        // One tool the model could not be offered (its schema) never takes the server's other tools with it.
        this.warn("REIN_MCP_TOOL_SKIPPED", `mcpTools: skipped the MCP tool '${name}': ${errorMessage(error)}`);
      }
    }
    this.tools.splice(0, this.tools.length);
    for (const tool of tools) this.tools.push(tool);
  }

  private warn(code: string, message: string): void {
    if (this.options.onWarning !== undefined) this.options.onWarning(message);
    else process.emitWarning(message, { code });
  }

  /** The Rein tool of a listed tool; the same object while its description does not change. */
  private toolFor(description: McpToolDescription): Tool {
    const known = this.#built.get(description.name);
    if (known !== undefined && JSON.stringify(known.description) === JSON.stringify(description)) return known.tool;
    const tool = mcpTool(this, description);
    this.#built.set(description.name, { description, tool });
    return tool;
  }
}


/**
 * Errors the SDK's client reports about a message it could not match to
 * anything of its own (a stray progress notification, a late answer): the
 * connection still stands, so the calls in flight go on.
 */
function isStrayMessageError(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return (
    message.startsWith("Received a progress notification for an unknown token") ||
    message.startsWith("Received a response for an unknown message ID") ||
    message.startsWith("Uncaught error in notification handler") ||
    message.startsWith("Unknown message type")
  );
}

function mcpTool(source: McpToolSource, description: McpToolDescription): Tool {
  const { name } = description;
  const text = description.description ?? "";
  const parameters = (typeof description.inputSchema === "object" && description.inputSchema !== null ? description.inputSchema : { type: "object" }) as JsonSchema;
  const schema = resolveSchema(parameters, `MCP tool '${name}'`, true);
  const frame: Frame = { key: `mcp:${name}`, name, kind: "tool" };
  const info = { name, doc: text, expose: "full" as const, toolName: name, isAsync: true };
  const call = (args: Record<string, unknown>, options: ToolExecuteOptions): Promise<unknown> => callMcpTool(source, name, args, options.signal);
  return {
    spec: { name, description: text, parameters },
    poll: false,
    async execute(args, options = {}) {
      const value = (await validateArguments(name, schema, args)) as Record<string, unknown>;
      return enterFunctionScope(frame, info, undefined, call, undefined, [value, options]);
    },
  };
}

async function callMcpTool(source: McpToolSource, name: string, args: Record<string, unknown>, signal: AbortSignal | undefined): Promise<unknown> {
  let result: object;
  try {
    result = await source.call(name, args, signal);
  } catch (error) {
    // The run's own cancellation stays a cancellation (the SDK rejects with the signal's reason).
    if (signal?.aborted === true) throw signal.reason;
    const code = typeof (error as { code?: unknown })?.code === "number" ? (error as { code: number }).code : undefined;
    throw new McpToolError(name, "request", errorMessage(error), { code, cause: error });
  }
  return toolValue(name, result);
}

function checkOptions(client: McpClientLike, options: McpToolsOptions): void {
  const shape = client as unknown as Record<string, unknown>;
  for (const method of ["listTools", "callTool", "setNotificationHandler"]) {
    if (typeof shape?.[method] !== "function") {
      throw new TypeError(`mcpTools(client): client must be a connected MCP Client of @modelcontextprotocol/sdk (it has no ${method}() method)`);
    }
  }
  if (typeof options !== "object" || options === null) throw new TypeError("mcpTools(client, options): options must be { include?, exclude?, maxPages?, maxTools?, onWarning? }");
  for (const key of Object.keys(options)) {
    if (!["include", "exclude", "maxPages", "maxTools", "onWarning"].includes(key)) {
      throw new TypeError(`mcpTools(client, options): unknown option '${key}' (known: include, exclude, maxPages, maxTools, onWarning)`);
    }
  }
  for (const key of ["maxPages", "maxTools"] as const) {
    const bound = options[key];
    if (bound !== undefined && (!Number.isInteger(bound) || bound < 1)) {
      throw new TypeError(`mcpTools(client, options): ${key} must be a positive integer, got ${JSON.stringify(bound)}`);
    }
  }
  for (const key of ["include", "exclude"] as const) {
    const list = options[key];
    if (list !== undefined && (!Array.isArray(list) || list.some((name) => typeof name !== "string"))) {
      throw new TypeError(`mcpTools(client, options): ${key} must be an array of tool names (strings)`);
    }
  }
}

/**
 * The SDK's schema of `notifications/tools/list_changed`, from the SDK the
 * app installed (an optional peer dependency: loaded only when mcpTools is
 * used, and the app that made the client has it).
 */
function listChangedSchema(): unknown {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require("@modelcontextprotocol/sdk/types.js") as { ToolListChangedNotificationSchema: unknown }).ToolListChangedNotificationSchema;
  } catch (error) {
    throw new TypeError(
      `mcpTools needs @modelcontextprotocol/sdk (the package the client comes from) to be installed beside rein: ${errorMessage(error)}. ` +
        `Install it: npm install @modelcontextprotocol/sdk`,
    );
  }
}
