import { SystemFailureError } from "./rein-error";

/**
 * A tool call ran longer than its `timeout` (`methodOptions.timeout`, or
 * `timeout` in `tool({...})`). It is the reason of the AbortSignal the tool
 * received, so the tool's own work (and any model request it makes) stops;
 * the model gets a tool error saying the call timed out, and the run goes
 * on. A system failure: the tool, or what it waited for, did not answer in
 * time.
 *
 * @example
 * ```ts
 * if (ToolTimeoutError.isInstance(currentSignal()?.reason)) cleanUp();
 * ```
 */
export class ToolTimeoutError extends SystemFailureError {
  static {
    this.defineErrorName("ToolTimeoutError");
  }

  /** The tool that timed out. */
  readonly toolName: string;
  /** The limit it exceeded, in milliseconds. */
  readonly timeoutMs: number;

  constructor(toolName: string, timeoutMs: number) {
    super(
      `tool '${toolName}' timed out after ${timeoutMs} ms and was cancelled; ` +
        `raise its timeout if the work really takes longer, or make it faster`,
    );
    this.toolName = toolName;
    this.timeoutMs = timeoutMs;
  }
}
