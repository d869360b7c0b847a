import * as guard from "@rein/guard";
import { Context } from "../context/context";
import { currentScope, deriveScope, toolOnChain, type ScopedFunctionInfo } from "../scope/call-scope";
import { answerRefusal, enterAgent } from "../scope/agent-entry";
import type { ScopeOwner } from "../scope/enter-scope";
import { endSpanWith, failSpan } from "../telemetry/tracing";
import { usageAttributes } from "../telemetry/loop-spans";
import type { ExecResult } from "../runtime/exec-result";

const ENTRY_INFO = new WeakMap<object, Record<string, ScopedFunctionInfo>>();

/** How an agent is entered other than by its methods: a turn, or a loop asked of it (`ask`, `stream`, `choose`). */
export type AgentCallKind = "turn" | "ask" | "stream" | "choose";

/** What a refused `ask` or `choose` answers instead: the agent's `fallback` value. @internal */
export interface FallbackAnswer {
  readonly fallback: unknown;
}

/** How an agent call enters: its kind, the entry settings (the runtime in use), and for `ask`/`choose` its arguments. @internal */
export interface AgentCallEntry {
  readonly kind: AgentCallKind;
  /** The agent's entry settings for the runtime the loop runs on. @default the agent's own */
  readonly entry?: ScopeOwner["agentEntry"];
  /** Given: a refusal at entry answers with the agent's `fallback(task, error)` (as for a method) when it has one. */
  readonly args?: readonly unknown[];
}

/**
 * Runs one turn of `agent` (`runTurn`, `resumeTurn`, `chat`), or one loop
 * asked of it from outside it (`ask`, `stream`, `choose`), as an Agent
 * entry, through the same {@link enterAgent} as its methods: one level of
 * logic depth, the agent's reach policy (a run of its own, or one within
 * the caller's that only narrows it), `reach-status`, the `invoke_agent`
 * span. Refused by reach, it rejects with the refusal before any request —
 * or, with `args`, answers with the agent's `fallback`. Asked from inside
 * the agent's own call, it is no entry.
 * @internal
 */
export function enterTurn(agent: ScopeOwner & object, context: Context, run: () => Promise<ExecResult>, call: AgentCallEntry = { kind: "turn" }): Promise<ExecResult | FallbackAnswer> {
  const parent = currentScope();
  if (call.kind !== "turn" && parent?.agent === agent) return run();
  const info = entryInfo(agent, call.kind);
  const events = agent.eventsFor === undefined ? parent?.events : agent.eventsFor(parent?.events);
  const entered = enterAgent(parent, agent, info, events, context.sessionId, undefined, call.entry);
  const { span } = entered;
  if (entered.refusal !== undefined) {
    if (span !== undefined) {
      failSpan(span, entered.refusal);
      span.end();
    }
    if (call.args === undefined) return Promise.reject(entered.refusal);
    const refusal = entered.refusal;
    return new Promise((answer) => answer(answerRefusal(agent, { ...info, isAsync: false }, call.args!, refusal))).then((fallback) => ({ fallback }));
  }
  // The turn's loop takes the turn's Context itself (it is passed on the request): the scope only carries the entry.
  const scope = deriveScope(parent);
  scope.context = parent?.context ?? new Context();
  scope.agent = entered.agent;
  scope.tool = toolOnChain(parent, entered.agent, undefined);
  scope.agentDepth = entered.agentDepth;
  scope.reach = entered.reach;
  scope.trace = entered.trace;
  const turn = (): Promise<ExecResult> => guard.withFrameData(scope, run);
  if (span === undefined) return turn();
  // The entry's span carries what its run used, as a loop's own agent span does.
  return endSpanWith(span, () => turn().then((result) => {
    if (span.isRecording()) span.setAttributes(usageAttributes(result.run.usage));
    return result;
  }));
}

function entryInfo(agent: object, kind: AgentCallKind): ScopedFunctionInfo {
  let infos = ENTRY_INFO.get(agent.constructor);
  if (infos === undefined) ENTRY_INFO.set(agent.constructor, (infos = {}));
  return (infos[kind] ??= { name: `${agent.constructor.name}.${kind}`, doc: "", expose: "full", isAsync: true });
}
