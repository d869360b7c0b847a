import { ModelBehaviorError } from "../errors/rein-error";

/**
 * Ends a run whose model went straight back into the same loop after its
 * context was compacted: the same tool, arguments and result filled the
 * post-compaction window. Returned by {@link PostCompactionGuard.observe} for
 * the runtime to throw. Model behaviour: a {@link ModelBehaviorError}.
 *
 * @example
 * ```ts
 * if (PostCompactionLoopPersistedError.isInstance(error)) console.log(error.toolName, error.count);
 * ```
 */
export class PostCompactionLoopPersistedError extends ModelBehaviorError {
  static {
    this.defineErrorName("PostCompactionLoopPersistedError");
  }

  /** Always `"compaction_loop_persisted"`, beside the loop detectors' kinds. */
  readonly detector = "compaction_loop_persisted" as const;
  /** Identical (tool, arguments, result) calls seen after the compaction. */
  readonly count: number;
  /** The tool that kept being called. */
  readonly toolName: string;

  constructor(toolName: string, count: number, options?: { cause?: unknown }) {
    super(
      `CRITICAL: ${toolName} was called ${count} times with the same arguments and the same result right after ` +
        `context compaction — compaction did not break the loop, so the run was stopped. ` +
        `Change the agent's approach or tools for this step, or split the task so it fits the context.`,
      options,
    );
    this.count = count;
    this.toolName = toolName;
  }
}
