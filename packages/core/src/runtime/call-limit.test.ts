import { getEventListeners } from "node:events";
import { ReachExceededError, ReachPolicy, ReachRun } from "@rein/guard";
import { Agent } from "../agent/agent";
import { ScriptedProvider } from "../model/scripted-provider";
import { CallLimit } from "./call-limit";
import { Runtime } from "./runtime";

/** How many signals Node's AbortSignal.any has made dependent on `signal` (0 where Node keeps no such set). */
function dependantSignals(signal: AbortSignal): number {
  const key = Object.getOwnPropertySymbols(signal).find((symbol) => symbol.description === "kDependantSignals");
  const set = key === undefined ? undefined : (signal as unknown as Record<symbol, { size?: number } | undefined>)[key];
  return set?.size ?? 0;
}

describe("CallLimit: a call's time under the run's signal", () => {
  it("a long-lived signal given to many runs is left as it was: each request and tool call under a deadline removes what it added", async () => {
    // A server's shutdown signal, say, passed to every run: nothing may pile up on it call after call.
    const controller = new AbortController();
    let before = -1;
    const dependantsBefore = dependantSignals(controller.signal);
    class Stepper extends Agent {
      static methodOptions = { step: { tool: true, description: "One step.", timeout: 30_000 } };
      step(): string {
        return "ok";
      }
    }
    for (let run = 0; run < 20; run++) {
      const model = new ScriptedProvider([{ toolCalls: [{ name: "step", input: {} }] }, { toolCalls: [{ name: "step", input: {} }] }, "done"]);
      const agent = new Stepper({ runtime: new Runtime({ provider: model, reach: { timeoutMs: 60_000 } }) });
      expect(await agent.ask("Go.", { signal: controller.signal })).toBe("done");
      // The first run adds the one listener all runs on this signal share (cancellation.ts onAbort); no run adds more.
      if (run === 0) before = getEventListeners(controller.signal, "abort").length;
    }
    expect(before).toBeLessThanOrEqual(1);
    // AbortSignal.any on Node 20 keeps an entry per joined signal on this one, never removed: none may be added.
    expect(dependantSignals(controller.signal)).toBe(dependantsBefore);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(before);
  });

  it("a disposed limit has left the run's signal: the run's abort no longer reaches it", () => {
    const controller = new AbortController();
    const run = new ReachRun(new ReachPolicy({ timeoutMs: 60_000 }));
    const limit = CallLimit.ofDeadline(run, controller.signal)!;
    limit.dispose();
    controller.abort(new Error("stop"));
    expect(limit.signal.aborted).toBe(false);
  });

  it("the run's signal still reaches the call: it fires with the run's reason, before any limit", () => {
    const controller = new AbortController();
    const run = new ReachRun(new ReachPolicy({ timeoutMs: 60_000 }));
    const limit = CallLimit.ofDeadline(run, controller.signal)!;
    controller.abort(new Error("stop"));
    expect(limit.signal.reason).toEqual(new Error("stop"));
    expect(limit.endsRun(limit.signal.reason)).toBe(false);
    limit.dispose();
  });

  it("at the deadline the call's signal fires with the deadline's error, which ends the run", async () => {
    const controller = new AbortController();
    const run = new ReachRun(new ReachPolicy({ timeoutMs: 1 }), undefined, Date.now() - 10);
    const limit = CallLimit.ofDeadline(run, controller.signal)!;
    expect(limit.signal.reason).toBeInstanceOf(ReachExceededError);
    expect(limit.endsRun(limit.signal.reason)).toBe(true);
    limit.dispose();
  });
});
