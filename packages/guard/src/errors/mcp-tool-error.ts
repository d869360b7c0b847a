import { SystemFailureError } from "./rein-error";

/**
 * An MCP tool call failed: the server answered with `isError: true`, or the
 * request itself failed (the server died, the connection closed, the
 * server answered a JSON-RPC error). The model gets a tool error with this
 * message and the run goes on; loop detection counts it like any other
 * error result. A cancellation of the run is not one of these: it stays a
 * cancellation.
 * @example
 * ```ts
 * if (McpToolError.isInstance(error) && error.reason === "request") reconnect();
 * ```
 */
export class McpToolError extends SystemFailureError {
  static {
    this.defineErrorName("McpToolError");
  }

  /** The MCP tool's name. */
  readonly toolName: string;
  /** `"result"`: the server ran the tool and reported an error; `"request"`: the call did not complete. */
  readonly reason: "result" | "request";
  /** The JSON-RPC error code, when the server (or the SDK client) gave one. */
  readonly code: number | undefined;

  constructor(toolName: string, reason: "result" | "request", detail: string, options: { code?: number; cause?: unknown } = {}) {
    super(
      reason === "result"
        ? `MCP tool '${toolName}' reported an error: ${detail}`
        : `MCP tool '${toolName}' could not be called: ${detail} — the MCP server may have stopped; the call did not complete`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.toolName = toolName;
    this.reason = reason;
    this.code = options.code;
  }
}
