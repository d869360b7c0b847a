/**
 * Where two mechanisms meet: compaction × the reach budget and the run's
 * figures, nested budgets × a run's budget, concurrent sibling runs × their
 * RunResults, a resumable method × its fallback, wrappers × agent nesting.
 * Each case failed before the request gate, the run ledger, the one scope
 * derivation and the one agent entry (DESIGN 3.8).
 */
import fc from "fast-check";
import { MemoryReachExceededError, ReachError, ReachExceededError, ReachPolicy, resetMemorySample, setMemoryReader, type ReachBudget, ContextOverflowError } from "@rein/guard";
import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import { ScriptedProvider } from "../model/scripted-provider";
import { step } from "../resumable/step";
import { InMemorySessionStore } from "@rein/session";
import { childBudget, currentReach, withReachBudget } from "./reach";
import { withRunListener } from "./run-listener";
import type { RunResult } from "./run-result";
import { Runtime } from "./runtime";

/** A conversation long enough to have something to compact: one tool call, then an overflow. */
function overflowingModel(summaryUsage: { inputTokens: number; outputTokens: number }): ScriptedProvider {
  return new ScriptedProvider([
    { toolCalls: [{ name: "note", input: { text: "x" } }], usage: { inputTokens: 10, outputTokens: 5 } },
    new ContextOverflowError("prompt is too long", { provider: "scripted" }),
    { text: "The user asked for a note; it was written.", usage: summaryUsage },
    { text: "done", usage: { inputTokens: 1, outputTokens: 1 } },
  ]);
}

class Noter extends Agent {
  static methodOptions = { note: { tool: true, description: "Write a note." } };
  note(text: string): string {
    return `noted ${text}`;
  }
}

describe("one request gate: compaction is a request like any other", () => {
  it("the compaction summary counts in RunResult.requests and usage", async () => {
    const model = overflowingModel({ inputTokens: 7, outputTokens: 3 });
    const agent = new Noter({ runtime: new Runtime({ provider: model }) });
    const result = await agent.stream("Write a note.").result;
    expect(result.status).toBe("completed");
    // Three answered requests: the tool call, the summary, the final answer (the overflowed one was never answered).
    expect(result.requests).toBe(3);
    expect(result.usage.inputTokens).toBe(10 + 7 + 1);
    expect(result.usage.outputTokens).toBe(5 + 3 + 1);
  });

  it("a spent token budget refuses the compaction summary before it is sent", async () => {
    const model = new ScriptedProvider([
      { toolCalls: [{ name: "note", input: { text: "x" } }], usage: { inputTokens: 10, outputTokens: 980 } },
      { text: "a summary", usage: { inputTokens: 5, outputTokens: 5 } },
      { text: "done", usage: { inputTokens: 1, outputTokens: 1 } },
    ]);
    // After the first request 990 of 1,000 tokens are spent; the conversation then outgrows
    // maxContextTokens, and the summary request it calls for cannot be afforded.
    const runtime = new Runtime({ provider: model, reach: { maxTokens: 1_000 }, maxContextTokens: 60 });
    const result = await new Noter({ runtime }).stream("Write a note.").result;
    expect(result.status).toBe("error");
    expect(ReachExceededError.isInstance(result.error)).toBe(true);
    expect(result.error).toMatchObject({ dimension: "tokens" });
    expect(model.requests.length).toBe(1);
    expect(result.requests).toBe(1);
  });
});

describe("budgets only narrow", () => {
  class Leaf extends Agent {
    async run(): Promise<number> {
      return currentReach()!.depth.used;
    }
  }

  it("a nested withReachBudget cannot widen the depth a caller has left", async () => {
    class Outer extends Agent {
      async run(): Promise<number> {
        return withReachBudget({ depth: 5 }, () => new Leaf().run());
      }
    }
    const error = await withReachBudget({ depth: 1 }, () => new Outer().run()).catch((caught: unknown) => caught);
    expect(ReachExceededError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ dimension: "depth" });
  });

  it("a nested withReachBudget cannot reset a spent token budget, and what it spends is charged to the caller", async () => {
    const model = new ScriptedProvider([
      { text: "first", usage: { inputTokens: 100, outputTokens: 60 } },
      { text: "second", usage: { inputTokens: 1, outputTokens: 1 } },
    ]);
    const runtime = new Runtime({ provider: model });
    class Spender extends Agent {
      async run(): Promise<string> {
        return this.ask("Spend.");
      }
    }
    const outcome = await withReachBudget({ depth: 5, tokens: 150 }, async () => {
      await new Spender({ runtime }).run();
      return withReachBudget({ depth: 5, tokens: 1_000_000 }, () => new Spender({ runtime }).run()).catch((caught: unknown) => caught);
    });
    expect(ReachExceededError.isInstance(outcome)).toBe(true);
    expect(outcome).toMatchObject({ dimension: "tokens" });
    expect(model.requests.length).toBe(1);
  });

  it("an agent with a reach policy of its own is held to it when a caller with a larger budget calls it: its tokens, and its depth counted from its entry", async () => {
    const innerModel = new ScriptedProvider([{ text: "inner answer", usage: { inputTokens: 10_000, outputTokens: 5_000 } }], { whenExhausted: "repeat-last" });
    class Cheap extends Agent {
      static methodOptions = { summarize: { tool: true, description: "Summarize cheaply (two requests)." } };
      async summarize(text: string): Promise<string> {
        return (await this.ask(`Summarize: ${text}`)) + (await this.ask(`Again: ${text}`));
      }
    }
    const cheap = new Cheap({ runtime: new Runtime({ provider: innerModel, reach: { maxTokens: 15_000, maxLogicDepth: 1 } }) });
    class Boss extends Agent {
      async run(): Promise<string> {
        return this.ask("Summarize x.", { tools: cheap.asTools() });
      }
    }
    const outerModel = new ScriptedProvider([{ toolCalls: [{ name: "summarize", input: { text: "x" } }] }, "done"]);
    const boss = new Boss({ runtime: new Runtime({ provider: outerModel, reach: { maxTokens: 1_000_000 } }) });
    await boss.run();
    // The second request would pass 15,000 tokens: refused (the model got a tool error), as when Cheap runs alone.
    expect(innerModel.requests.length).toBe(1);
    expect(JSON.stringify(outerModel.requests[1]!.messages)).toContain("reach exceeded");
    // Depth: Cheap's maxLogicDepth 1 counts from its own entry (depth 2 of Boss's run), so it is entered, not refused.
    class Deep extends Agent {
      async run(): Promise<number> {
        return currentReach()!.depth.limit;
      }
    }
    const deep = new Deep({ reach: { maxLogicDepth: 1 } });
    class Caller extends Agent {
      async run(): Promise<number> {
        return deep.run();
      }
    }
    expect(await withReachBudget({ depth: 5 }, () => new Caller().run())).toBe(2);
    // And never past what the caller had left: depth 1 left below the caller refuses Deep's entry.
    const refused = await withReachBudget({ depth: 1 }, () => new Caller().run()).catch((caught: unknown) => caught);
    expect(refused).toMatchObject({ name: "ReachExceededError", dimension: "depth" });
  });

  it("childBudget() never passes on a zone, tokens, cost or a deadline the caller did not have", () => {
    const deadline = Date.now() + 60_000;
    const outer: ReachBudget = { depth: 3, zones: ["local"], tokens: 500, costUsd: 1, deadline };
    const passed = withReachBudget(outer, () =>
      withReachBudget({ depth: 9, zones: ["local", "docker-network"], tokens: 10_000, costUsd: 50, deadline: deadline + 3_600_000 }, () => childBudget()),
    )!;
    expect(passed.zones).toEqual(["local"]);
    expect(passed.depth).toBeLessThanOrEqual(3);
    expect(passed.tokens).toBeLessThanOrEqual(500);
    expect(passed.costUsd).toBeLessThanOrEqual(1);
    expect(passed.deadline).toBeLessThanOrEqual(deadline);
  });

  it("property: any nesting of withReachBudget, withRunListener, agent methods and sub-agents never ends with more budget than the outermost caller had", async () => {
    type Layer = { kind: "budget"; budget: ReachBudget } | { kind: "listener" } | { kind: "helper" } | { kind: "sub-agent" };
    const layer: fc.Arbitrary<Layer> = fc.oneof(
      fc.record({
        kind: fc.constant("budget" as const),
        budget: fc.record({
          depth: fc.integer({ min: 0, max: 9 }),
          tokens: fc.integer({ min: 0, max: 100_000 }),
          costUsd: fc.integer({ min: 0, max: 100 }),
          deadline: fc.integer({ min: 0, max: 7_200_000 }).map((ms) => Date.now() + ms),
          zones: fc.subarray(["local", "docker-network", "public-internet"]),
        }),
      }),
      fc.constant({ kind: "listener" as const }),
      fc.constant({ kind: "helper" as const }),
      fc.constant({ kind: "sub-agent" as const }),
    );
    class Nester extends Agent {
      async nest(layers: readonly Layer[]): Promise<ReachBudget | undefined> {
        return descend(layers);
      }
      async helper(layers: readonly Layer[]): Promise<ReachBudget | undefined> {
        return descend(layers);
      }
    }
    let current: Nester | undefined;
    const descend = async (layers: readonly Layer[]): Promise<ReachBudget | undefined> => {
      if (layers.length === 0) return childBudget();
      const [first, ...rest] = layers as [Layer, ...Layer[]];
      switch (first.kind) {
        case "budget":
          return withReachBudget(first.budget, () => descend(rest));
        case "listener":
          return withRunListener(() => undefined, () => descend(rest));
        case "helper":
          return current === undefined ? descend(rest) : current.helper(rest);
        case "sub-agent":
          current = new Nester();
          return current.nest(rest);
      }
    };
    await fc.assert(
      fc.asyncProperty(
        fc.record({ depth: fc.integer({ min: 1, max: 6 }), tokens: fc.integer({ min: 0, max: 50_000 }), costUsd: fc.integer({ min: 0, max: 20 }) }),
        fc.array(layer, { maxLength: 6 }),
        async (outer, layers) => {
          const deadline = Date.now() + 600_000;
          const root: ReachBudget = { ...outer, deadline, zones: ["local"] };
          current = undefined;
          const passed = await withReachBudget(root, () => descend(layers)).catch((error: unknown) => {
            if (ReachError.isInstance(error)) return undefined; // refused on the way down: nothing widened
            throw error;
          });
          if (passed === undefined) return;
          expect(passed.depth).toBeLessThanOrEqual(root.depth);
          expect(passed.tokens ?? Infinity).toBeLessThanOrEqual(root.tokens!);
          expect(passed.costUsd ?? Infinity).toBeLessThanOrEqual(root.costUsd!);
          expect(passed.deadline ?? Infinity).toBeLessThanOrEqual(deadline);
          for (const zone of passed.zones ?? ["local", "docker-network"]) expect(root.zones).toContain(zone);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("a received memory budget below the local maximum is the one enforced", async () => {
    // The process's memory is stated (grows by 64 MB), not allocated and read from RSS.
    let memoryMb = 200;
    setMemoryReader(() => memoryMb);
    class Worker extends Agent {
      async run(): Promise<string> {
        return "ran";
      }
    }
    class Hungry extends Agent {
      async run(): Promise<string> {
        memoryMb += 64;
        resetMemorySample();
        return new Worker().run();
      }
    }
    try {
      const error = await withReachBudget({ depth: 5, memoryMb: 16 }, () => new Hungry().run(), { policy: new ReachPolicy({ maxMemoryMb: 1024 }) }).catch(
        (caught: unknown) => caught,
      );
      expect(MemoryReachExceededError.isInstance(error)).toBe(true);
      expect((error as MemoryReachExceededError).limitMb).toBe(16);
      expect((error as MemoryReachExceededError).growthMb).toBe(64);
    } finally {
      setMemoryReader(undefined);
    }
  });
});

describe("a ledger per run", () => {
  /** A sub-agent whose every request uses `input` input tokens: its run's figures are known exactly. */
  function subAgent(requests: number, input: number): Agent {
    const turns = [
      ...Array.from({ length: requests - 1 }, () => ({ toolCalls: [{ name: "note", input: { text: "n" } }], usage: { inputTokens: input, outputTokens: 1 } })),
      { text: "sub done", usage: { inputTokens: input, outputTokens: 1 } },
    ];
    return new Noter({ runtime: new Runtime({ provider: new ScriptedProvider(turns) }) });
  }

  it("two sub-agent runs started together report exactly their own requests and tokens; the parent counts both", async () => {
    const subResults: RunResult[] = [];
    class Lead extends Agent {
      static methodOptions = { fanOut: { tool: true, description: "Ask two specialists at once." } };
      async fanOut(): Promise<string> {
        const results = await Promise.all([subAgent(2, 100).stream("A").result, subAgent(1, 1000).stream("B").result]);
        subResults.push(...results);
        return "both answered";
      }
    }
    const lead = new Lead({
      runtime: new Runtime({
        provider: new ScriptedProvider([
          { toolCalls: [{ name: "fanOut", input: {} }], usage: { inputTokens: 5, outputTokens: 1 } },
          { text: "all done", usage: { inputTokens: 5, outputTokens: 1 } },
        ]),
      }),
    });
    const parent = await lead.stream("Go.").result;
    const [a, b] = subResults as [RunResult, RunResult];
    expect([a.requests, a.usage.inputTokens, a.toolCalls]).toEqual([2, 200, 1]);
    expect([b.requests, b.usage.inputTokens, b.toolCalls]).toEqual([1, 1000, 0]);
    expect(parent.requests).toBe(2 + a.requests + b.requests);
    expect(parent.usage.inputTokens).toBe(10 + a.usage.inputTokens + b.usage.inputTokens);
    expect(parent.toolCalls).toBe(1 + a.toolCalls + b.toolCalls);
  });

  it("property: N concurrent sibling runs' totals sum exactly to the parent's", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ requests: fc.integer({ min: 1, max: 4 }), input: fc.integer({ min: 0, max: 500 }) }), { minLength: 1, maxLength: 6 }), async (plans) => {
        const siblings: RunResult[] = [];
        class Lead extends Agent {
          static methodOptions = { fanOut: { tool: true, description: "Ask every specialist at once." } };
          async fanOut(): Promise<string> {
            siblings.push(...(await Promise.all(plans.map((plan, index) => subAgent(plan.requests, plan.input).stream(`sub ${index}`).result))));
            return "ok";
          }
        }
        const provider = new ScriptedProvider([{ toolCalls: [{ name: "fanOut", input: {} }], usage: { inputTokens: 0, outputTokens: 0 } }, { text: "done", usage: { inputTokens: 0, outputTokens: 0 } }]);
        const parent = await new Lead({ runtime: new Runtime({ provider }) }).stream("Go.").result;
        siblings.forEach((result, index) => {
          expect(result.requests).toBe(plans[index]!.requests);
          expect(result.usage.inputTokens).toBe(plans[index]!.requests * plans[index]!.input);
        });
        expect(parent.requests).toBe(2 + siblings.reduce((sum, result) => sum + result.requests, 0));
        expect(parent.usage.inputTokens).toBe(siblings.reduce((sum, result) => sum + result.usage.inputTokens, 0));
        expect(parent.toolCalls).toBe(1 + siblings.reduce((sum, result) => sum + result.toolCalls, 0));
      }),
      { numRuns: 40 },
    );
  });
});

describe("one agent entry", () => {
  it("a resumable method refused by reach answers with the agent's fallback, like any method", async () => {
    const store = new InMemorySessionStore();
    store.createSession("s");
    class Pipeline extends Agent {
      static methodOptions = { process: { resumable: true } };
      static fallback = (task: { name: string }, error: Error) => `fallback for ${task.name}: ${error.name}`;
      async process(input: string): Promise<string> {
        return step("upper", async (text: string) => text.toUpperCase(), input);
      }
    }
    const pipeline = new Pipeline({ context: Context.forSession(store, "s") });
    const answer = await withReachBudget({ depth: 0 }, () => pipeline.process("a"));
    expect(answer).toBe("fallback for Pipeline.process: ReachExceededError");
  });

  it("inside withRunListener and withReachBudget, an agent's own helper is no new agent entry", async () => {
    const depths: number[] = [];
    class Careful extends Agent {
      static reach = new ReachPolicy({ maxLogicDepth: 1 });
      async run(): Promise<string> {
        await withRunListener(() => undefined, () => this.helper());
        await withReachBudget({ depth: 0 }, () => this.helper());
        return "ok";
      }
      async helper(): Promise<void> {
        depths.push(currentReach()!.depth.used);
      }
    }
    await expect(new Careful().run()).resolves.toBe("ok");
    expect(depths).toEqual([1, 0]);
  });

  it("a turn is an agent entry: it uses one level of depth, and a spent depth budget refuses it before any request", async () => {
    const model = new ScriptedProvider([(request) => `depth seen by the turn's tools: ${String(request.messages.length)}`], { whenExhausted: "repeat-last" });
    const depths: number[] = [];
    class Assistant extends Agent {
      static methodOptions = { where: { tool: true, description: "Report the depth." } };
      where(): string {
        depths.push(currentReach()!.depth.used);
        return "here";
      }
    }
    const runtime = new Runtime({ provider: model });
    const refused = await withReachBudget({ depth: 0 }, () => new Assistant({ runtime }).runTurn({ input: "Hi." }));
    expect(refused.status).toBe("error");
    expect(ReachExceededError.isInstance(refused.error)).toBe(true);
    expect(model.requests.length).toBe(0);

    const calling = new Runtime({ provider: new ScriptedProvider([{ toolCalls: [{ name: "where", input: {} }] }, "done"]) });
    const turn = await withReachBudget({ depth: 1 }, () => new Assistant({ runtime: calling }).runTurn({ input: "Where?" }));
    expect(turn.status).toBe("completed");
    expect(depths).toEqual([1]);
  });
});
