import type { Context } from "../context/context";

/** What a pre-invocation hook learns about the call about to run. */
export interface InvocationInfo {
  /** Readable name of the function (`Researcher.research`). */
  readonly name: string;
  /** The agent instance (or class, for static methods); undefined for plain tools. */
  readonly target: unknown;
  readonly args: readonly unknown[];
  readonly context: Context;
}

/**
 * Runs at the start of every scoped call, inside its frame, before the body.
 * Synchronous; throwing (typically `CancelledError`) aborts the call, whose
 * code node is then recorded as `cancelled` (or `error` for other errors).
 */
export type PreInvocationHook = (call: InvocationInfo) => void;

/** @internal read on every scoped call; kept as a plain array for speed. */
export const preInvocationHooks: PreInvocationHook[] = [];

/**
 * Registers a hook that runs at the start of every scoped call.
 *
 * @example
 * ```ts
 * addPreInvocationHook(({ name }) => { if (stopped) throw new CancelledError(`${name} cancelled`); });
 * ```
 */
export function addPreInvocationHook(hook: PreInvocationHook): void {
  if (typeof hook !== "function") throw new TypeError("addPreInvocationHook expects a function");
  preInvocationHooks.push(hook);
}

/** Removes a hook added with {@link addPreInvocationHook}; returns whether it was registered. */
export function removePreInvocationHook(hook: PreInvocationHook): boolean {
  const index = preInvocationHooks.indexOf(hook);
  if (index >= 0) preInvocationHooks.splice(index, 1);
  return index >= 0;
}
