import { ToolApprovalError } from "@rein/guard";
import type { Tool } from "../tools/tool";
import { validateArguments } from "../tools/tool";
import type { MethodInfo } from "./class-setup";
import { whileAwaitingApproval } from "../resumable/approval-wait";

/**
 * Decides whether a tool call of a `requiresApproval` method may run.
 * `signal` is the call's: it fires when the run is cancelled (an approval
 * UI can withdraw its question); an answer given after it fired is ignored
 * and the method does not run.
 */
export type ToolApprover = (call: { readonly toolName: string; readonly args: unknown; readonly signal?: AbortSignal }) => boolean | Promise<boolean>;

/**
 * The tool for a `tool: true` method of `instance`. Calling it validates
 * the arguments, then calls the method through the instance, so the call is
 * scoped exactly like a direct call (recursion ceiling included).
 */
export function methodTool(instance: object, method: MethodInfo, approve: ToolApprover | undefined): Tool {
  const toolInfo = method.tool;
  if (toolInfo === undefined) throw new TypeError(`${method.className}.${method.name} is not a tool method`);
  const { options } = method;
  const name = method.name;
  return {
    spec: {
      name,
      description: options.description ?? `Calls ${method.className}.${name}.`,
      parameters: toolInfo.schema.jsonSchema,
    },
    poll: options.poll ?? false,
    maxResultChars: options.maxResultChars,
    timeout: options.timeout,
    awaitsApproval: options.requiresApproval === true && approve === undefined,
    async execute(args, executeOptions) {
      const value = (await validateArguments(name, toolInfo.schema, args)) as Record<string, unknown>;
      if (options.requiresApproval && executeOptions?.approved !== true) {
        // Inside a resumable run, the run records that it waits (a crash meanwhile leaves it for resumeRun).
        const signal = executeOptions?.signal;
        const call = signal === undefined ? { toolName: name, args: value } : { toolName: name, args: value, signal };
        const approved = approve !== undefined && (await whileAwaitingApproval(name, value, () => approve(call)));
        // A run cancelled while its approver decided: the answer comes too late, the method does not run.
        signal?.throwIfAborted();
        if (!approved) {
          throw new ToolApprovalError(name, { approverConfigured: approve !== undefined });
        }
      }
      const positional = toolInfo.positional;
      const callArgs = positional === undefined ? [value] : positional.map((parameter) => value[parameter]);
      // The runtime runs this with the call's signal in scope (read by the method with `currentSignal()`);
      // a `timeout` fires that signal and ends the call (see executeToolCall).
      const target = (instance as Record<string, (...a: unknown[]) => unknown>)[name];
      return target.apply(instance, callArgs);
    },
  };
}
