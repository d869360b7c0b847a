import { Agent, Runtime, ScriptedProvider, addPreInvocationHook, removePreInvocationHook, withRunListener } from "rein";
import { deepestRecursion, GuardFigureCollector, type GuardFigures } from "./guard-figures";

test("deepestRecursion: the function with the most frames on the chain, and how many", () => {
  const frame = (key: string) => ({ key, name: key.replace("#", ".") });
  expect(deepestRecursion([])).toEqual({ used: 0, name: "" });
  expect(deepestRecursion([frame("A#run"), frame("B#tool"), frame("A#run"), frame("C#x"), frame("A#run"), frame("B#tool")])).toEqual({ used: 3, name: "A.run" });
});

test("a self-calling agent: recursion climbs 1..4 at each entry while the loop count and steps follow the run's events; the limit is the agent's own recursionLimit", async () => {
  class Looper extends Agent {
    static methodOptions = { dig: { tool: true, description: "Dig deeper." } };
    async dig(): Promise<string> {
      return this.ask("dig");
    }
  }
  const provider = new ScriptedProvider([{ toolCalls: [{ name: "dig" }] }], { whenExhausted: "repeat-last" });
  const agent = new Looper({ runtime: new Runtime({ provider, maxSteps: 50, recursionLimit: 4 }) });
  const collector = new GuardFigureCollector();
  collector.setStepLimit(agent.runtime.maxSteps);
  const seen: GuardFigures[] = [];
  const hook = (call: Parameters<Parameters<typeof addPreInvocationHook>[0]>[0]): void => {
    collector.observeCall(call);
    seen.push(collector.figures());
  };
  addPreInvocationHook(hook);
  try {
    await expect(withRunListener((event) => collector.observeEvent(event), () => agent.dig())).rejects.toThrow(/exceeded max nesting depth 4/);
  } finally {
    removePreInvocationHook(hook);
  }
  expect(seen.map((figures) => figures.recursion.used)).toEqual([1, 2, 3, 4]);
  expect(seen.at(-1)!.recursion).toEqual({ used: 4, limit: 4, name: "Looper.dig" });
  const after = collector.figures();
  expect(after.steps).toEqual({ used: provider.requests.length, limit: 50 });
  expect(after.steps.used).toBeGreaterThanOrEqual(4);
});

test("loop warnings and blocks are counted from the run's events", async () => {
  class Poller extends Agent {
    static methodOptions = { check: { tool: true, description: "Check the job." } };
    check(): string {
      return "still running";
    }
  }
  const provider = new ScriptedProvider([...Array.from({ length: 6 }, () => ({ toolCalls: [{ name: "check" }] })), "gave up"]);
  const runtime = new Runtime({ provider, loopDetection: { enabled: true, warningThreshold: 2, criticalThreshold: 4, globalCircuitBreakerThreshold: 30 } });
  const collector = new GuardFigureCollector();
  const types: string[] = [];
  await withRunListener(
    (event) => {
      types.push(event.type);
      collector.observeEvent(event);
    },
    () => new Poller({ runtime }).ask("wait for the job").catch(() => undefined),
  );
  const { loops } = collector.figures();
  expect(loops.warnings).toBe(types.filter((type) => type === "loop-warning").length);
  expect(loops.blocks).toBe(types.filter((type) => type === "loop-block").length);
  expect(loops.warnings + loops.blocks).toBeGreaterThan(0);
});
