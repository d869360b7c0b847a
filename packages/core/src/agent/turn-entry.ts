import * as guard from "@rein/guard";
import { Context } from "../context/context";
import { currentScope, deriveScope, toolOnChain, type ScopedFunctionInfo } from "../scope/call-scope";
import { enterAgent } from "../scope/agent-entry";
import type { ScopeOwner } from "../scope/enter-scope";
import { endSpanWith, failSpan } from "../telemetry/tracing";

const TURN_INFO = new WeakMap<object, ScopedFunctionInfo>();

/**
 * Runs one turn of `agent` (`runTurn`, `resumeTurn`, `chat`) as an Agent
 * entry, through the same {@link enterAgent} as its methods: one level of
 * logic depth, the reach check, `reach-status`, the `invoke_agent` span. A
 * turn refused by reach rejects with the refusal before any request.
 * @internal
 */
export function enterTurn<R>(agent: ScopeOwner & object, context: Context, run: () => Promise<R>): Promise<R> {
  const parent = currentScope();
  const info = turnInfo(agent);
  const events = agent.eventsFor === undefined ? parent?.events : agent.eventsFor(parent?.events);
  const entered = enterAgent(parent, agent, info, events, context.sessionId, undefined);
  const { span } = entered;
  if (entered.refusal !== undefined) {
    if (span !== undefined) {
      failSpan(span, entered.refusal);
      span.end();
    }
    return Promise.reject(entered.refusal);
  }
  // The turn's loop takes the turn's Context itself (it is passed on the request): the scope only carries the entry.
  const scope = deriveScope(parent);
  scope.context = parent?.context ?? new Context();
  scope.agent = entered.agent;
  scope.tool = toolOnChain(parent, entered.agent, undefined);
  scope.agentDepth = entered.agentDepth;
  scope.reach = entered.reach;
  scope.trace = entered.trace;
  const turn = (): Promise<R> => guard.withFrameData(scope, run);
  return span === undefined ? turn() : endSpanWith(span, turn);
}

function turnInfo(agent: object): ScopedFunctionInfo {
  let info = TURN_INFO.get(agent.constructor);
  if (info === undefined) {
    info = { name: `${agent.constructor.name}.turn`, doc: "", expose: "full", isAsync: true };
    TURN_INFO.set(agent.constructor, info);
  }
  return info;
}
