/**
 * One tool call in the {@link ToolLoopDetector} history: small hashes only,
 * never the arguments or the result themselves.
 */
export interface ToolCallRecord {
  /** The tool called. */
  readonly toolName: string;
  /** {@link hashToolCall} of the call: `${toolName}:<sha256 hex>`. */
  readonly argsHash: string;
  /** The provider's id of the call, when known. */
  readonly toolCallId?: string;
  /** The run the call belongs to; records are compared only within one run. */
  readonly runId?: string;
  /** {@link hashOutcome} of the outcome; `undefined` while pending or when the call was blocked. */
  readonly resultHash?: string;
  /** `"result"` or `"error"` once the outcome is recorded. */
  readonly outcome?: "result" | "error";
  /** The missing tool named by an unknown-tool failure. */
  readonly unknownToolName?: string;
  /** `Date.now()` when the call (or its outcome, if recorded alone) was recorded. */
  readonly timestamp: number;
}
