import { UnknownToolError } from "./unknown-tool-error";

/**
 * What a tool call's outcome says to the detector: the runtime's own block
 * result (which is no outcome: a block must not reset a streak), or an
 * unknown-tool failure naming the missing tool.
 */

/** The reason of the runtime's own block result. */
const BLOCKED_REASON = "tool-loop";
/** Messages that say a tool is unknown, and name it. */
const UNKNOWN_TOOL_PATTERNS = [
  /unknown tool[:\s]+["'`]?([\w.-]+)/i,
  /tool\s+["'`]?([\w.-]+)["'`]?\s+(?:was\s+)?(?:not found|does not exist|is not available|is unknown)/i,
];

/** True for the runtime's own block result (`{ status: "blocked", reason: "tool-loop" }`). */
export function isLoopBlock(result: unknown): boolean {
  if (typeof result !== "object" || result === null) return false;
  const { status, reason } = result as { status?: unknown; reason?: unknown };
  return status === "blocked" && reason === BLOCKED_REASON;
}

/** The missing tool an error names: an {@link UnknownToolError}, or a message saying a tool is unknown / not found. */
export function unknownToolNameOf(error: unknown): string | undefined {
  if (UnknownToolError.isInstance(error)) return error.toolName;
  const text = error instanceof Error ? error.message : typeof error === "string" ? error : undefined;
  if (text === undefined) return undefined;
  for (const pattern of UNKNOWN_TOOL_PATTERNS) {
    const name = pattern.exec(text)?.[1];
    if (name !== undefined) return name;
  }
  return undefined;
}
