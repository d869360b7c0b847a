import { createServer } from "node:http";
import { decodePolicyHeader, MemoryReachExceededError, parseTraceparent, ReachExceededError, ReachPolicy, UntrustedZoneError, resetMemorySample, resetZone, setMemoryReader } from "@rein/guard";
import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import type { ModelCallOptions, ModelRequest, ModelResponse } from "../model/model-provider";
import { ScriptedProvider } from "../model/scripted-provider";
import { InMemorySessionStore } from "@rein/session";
import { Runtime } from "./runtime";
import type { RunEvent } from "./runtime-events";
import { childBudget, currentReach, reachFetch, withReachBudget } from "./reach";
import { currentSignal } from "../scope/call-scope";

/** A model that always delegates: the fan-out that runs away without a reach policy. */
function alwaysDelegates(): ScriptedProvider {
  return new ScriptedProvider([{ toolCalls: [{ name: "delegate", input: {} }] }], { whenExhausted: "repeat-last" });
}

/**
 * A chain of distinct agent classes: level N's `delegate` tool creates a
 * level N+1 agent (a new class each time) and asks it. Nothing but reach
 * bounds how deep it goes: the recursion ceiling counts one function.
 */
function levelClass(level: number, runtime: Runtime): new () => Agent & { work(): Promise<string> } {
  const Level = class extends Agent {
    static methodOptions = { delegate: { tool: true, description: "Hand the task to a specialist." } };
    async delegate(): Promise<string> {
      const Next = levelClass(level + 1, runtime);
      return new Next().work();
    }
    async work(): Promise<string> {
      return this.ask(`Level ${level}: do the task.`);
    }
  };
  Object.defineProperty(Level, "name", { value: `Level${level}` });
  Object.defineProperty(Level, "runtime", { value: runtime });
  return Level as never;
}

describe("reach: logic depth", () => {
  it("a fan-out through distinct agent classes stops at logic depth 5 with ReachExceededError in at most 12 model requests", async () => {
    const model = alwaysDelegates();
    const runtime = new Runtime({ provider: model, reach: { maxLogicDepth: 5 } });
    const Level0 = levelClass(1, runtime);
    const error = await new Level0().work().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ReachExceededError);
    expect(error).toMatchObject({ dimension: "depth", used: 6, limit: 5 });
    expect(model.requests.length).toBeLessThanOrEqual(12);
    expect((error as Error).message).toMatch(/logic depth 6 > 5/);
  });

  it("without a reach policy the same fan-out goes on until a coarser guard ends it, several times as many requests later", async () => {
    const model = alwaysDelegates();
    const runtime = new Runtime({ provider: model });
    const error = await new (levelClass(1, runtime))().work().catch((caught: unknown) => caught);
    // The chain-depth ceiling (25 frames) or the step budget ends it: nothing knew these were nested agents.
    expect(["ChainDepthError", "MaxStepsExceededError"]).toContain((error as Error).name);
    expect(model.requests.length).toBeGreaterThan(12);
  });

  it("counts Agent entries only: an agent's own helpers, plain functions and HTTP-like calls never count", async () => {
    const depths: number[] = [];
    const fetchLike = async (): Promise<string> => {
      depths.push(currentReach()!.depth.used);
      return "response";
    };
    class Outer extends Agent {
      static reach = new ReachPolicy({ maxLogicDepth: 2 });
      async run(): Promise<string> {
        depths.push(currentReach()!.depth.used);
        await this.helper();
        await fetchLike();
        return new Inner().run();
      }
      async helper(): Promise<void> {
        depths.push(currentReach()!.depth.used);
      }
    }
    class Inner extends Agent {
      async run(): Promise<string> {
        depths.push(currentReach()!.depth.used);
        return this.nested();
      }
      nested(): string {
        depths.push(currentReach()!.depth.used);
        return "done";
      }
    }
    await expect(new Outer().run()).resolves.toBe("done");
    expect(depths).toEqual([1, 1, 1, 2, 2]);
  });

  it("a throw mid-chain leaves nothing behind: the next run in the process starts from depth 0", async () => {
    class Thrower extends Agent {
      static reach = { maxLogicDepth: 3 };
      async run(): Promise<void> {
        await new Inner().run();
      }
    }
    class Inner extends Agent {
      async run(): Promise<void> {
        throw new Error("boom");
      }
    }
    class Probe extends Agent {
      static reach = { maxLogicDepth: 3 };
      depth(): number {
        return currentReach()!.depth.used;
      }
    }
    for (let run = 0; run < 5; run++) await expect(new Thrower().run()).rejects.toThrow("boom");
    expect(new Probe().depth()).toBe(1);
  });
});

describe("reach: a parallel fan-out", () => {
  it("Promise.all of 3 sub-agents per level ends by depth or the step budget, whichever comes first, with a typed error", async () => {
    const model = alwaysDelegates();
    const runtime = new Runtime({ provider: model, reach: { maxLogicDepth: 4 }, maxSteps: 60 });
    function parallelLevel(level: number): new () => Agent & { work(): Promise<string> } {
      const Level = class extends Agent {
        static methodOptions = { delegate: { tool: true, description: "Hand the task to three specialists." } };
        async delegate(): Promise<string> {
          const Next = parallelLevel(level + 1);
          return (await Promise.all([new Next().work(), new Next().work(), new Next().work()])).join(" | ");
        }
        async work(): Promise<string> {
          return this.ask(`Level ${level}: do the task.`);
        }
      };
      Object.defineProperty(Level, "name", { value: `Parallel${level}` });
      Object.defineProperty(Level, "runtime", { value: runtime });
      return Level as never;
    }
    const error = await new (parallelLevel(1))().work().catch((caught: unknown) => caught);
    expect(["ReachExceededError", "MaxStepsExceededError"]).toContain((error as Error).name);
    // Levels 1..4 are 1 + 3 + 9 + 27 agents: never more requests than the step budget allows.
    expect(model.requests.length).toBeLessThanOrEqual(60);
  });
});

describe("reach: zone, memory, fallback", () => {
  const zone = process.env["REIN_ZONE"];
  afterEach(() => {
    if (zone === undefined) delete process.env["REIN_ZONE"];
    else process.env["REIN_ZONE"] = zone;
    resetZone();
  });

  it("a call in a zone the policy does not allow is refused with UntrustedZoneError naming the zones", () => {
    process.env["REIN_ZONE"] = "public-internet";
    resetZone();
    class Guarded extends Agent {
      static reach = { allowedZones: ["local", "docker-network"] };
      run(): string {
        return "ran";
      }
    }
    const error = (() => {
      try {
        new Guarded().run();
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(UntrustedZoneError);
    expect(error).toMatchObject({ zone: "public-internet", allowedZones: ["local", "docker-network"] });
  });

  it("memory growth past the limit at that depth (a stated growth of 64 MB) is refused with MemoryReachExceededError", async () => {
    // The process's memory is stated, not allocated and read from RSS (a GC could move that by more than the limit).
    let memoryMb = 200;
    setMemoryReader(() => memoryMb);
    class Hungry extends Agent {
      static reach = { maxMemoryMb: 16, memoryGrowth: 0 };
      async run(): Promise<string> {
        memoryMb += 64;
        resetMemorySample();
        return new Worker().run();
      }
    }
    class Worker extends Agent {
      async run(): Promise<string> {
        return "never";
      }
    }
    try {
      const error = await new Hungry().run().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(MemoryReachExceededError);
      expect((error as MemoryReachExceededError).growthMb).toBe(64);
      expect((error as MemoryReachExceededError).limitMb).toBe(16);
    } finally {
      setMemoryReader(undefined);
    }
  });

  it("memory growth within the limit at that depth is let through", async () => {
    let memoryMb = 200;
    setMemoryReader(() => memoryMb);
    class Modest extends Agent {
      static reach = { maxMemoryMb: 16, memoryGrowth: 0 };
      async run(): Promise<string> {
        memoryMb += 15;
        resetMemorySample();
        return new Helper().run();
      }
    }
    class Helper extends Agent {
      async run(): Promise<string> {
        return "ran";
      }
    }
    try {
      expect(await new Modest().run()).toBe("ran");
    } finally {
      setMemoryReader(undefined);
    }
  });

  it("fallback(task, error) answers a refused call instead of throwing; the node is recorded as degraded", async () => {
    const store = new InMemorySessionStore();
    class Careful extends Agent {
      static reach = { maxLogicDepth: 1 };
      async run(): Promise<string> {
        return new Specialist().answer("q");
      }
    }
    class Specialist extends Agent {
      static fallback = (task: { name: string; args: readonly unknown[] }, error: Error) => `degraded ${task.name}(${String(task.args[0])}): ${error.name}`;
      async answer(question: string): Promise<string> {
        return `full answer to ${question}`;
      }
    }
    const context = Context.forSession(store, "s");
    await expect(new Careful({ context }).run()).resolves.toBe("degraded Specialist.answer(q): ReachExceededError");
    const node = store.readNodes("s").find((found) => found.name === "Specialist.answer")!;
    expect(node.metadata).toMatchObject({ status: "completed", degraded: true });
    expect(node.output).toBe("degraded Specialist.answer(q): ReachExceededError");
  });
});

describe("reach: tokens, cost and deadline before each model request", () => {
  /** Reports 400 input + 100 output tokens per answer; calls `more` until told to stop. */
  function spender(): ScriptedProvider {
    return new ScriptedProvider(
      [(_request: ModelRequest) => ({ toolCalls: [{ name: "more", input: {} }], usage: { inputTokens: 400, outputTokens: 100 } })],
      { whenExhausted: "repeat-last" },
    );
  }
  class Spender extends Agent {
    static methodOptions = { more: { tool: true, description: "Do more." } };
    more(): string {
      return "ok";
    }
  }

  it("a token budget stops the run before the request that would cross it", async () => {
    const model = spender();
    const agent = new Spender({ runtime: new Runtime({ provider: model, reach: { maxTokens: 1_600 } }) });
    const error = await agent.ask("Go.").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ReachExceededError);
    expect(error).toMatchObject({ dimension: "tokens", limit: 1_600 });
    // 3 requests use 1,500 tokens; the 4th would cross 1,600 with its own input, so it is never sent.
    expect(model.requests).toHaveLength(3);
  });

  it("a cost budget (with pricing) stops the run the same way", async () => {
    const model = spender();
    const reach = new ReachPolicy({ maxCostUsd: 0.004, pricing: { scripted: { inputPerMTok: 3, outputPerMTok: 15 } } });
    const error = await new Spender({ runtime: new Runtime({ provider: model, reach }) }).ask("Go.").catch((caught: unknown) => caught);
    expect(error).toMatchObject({ dimension: "cost" });
    // $0.0027 per request: after 2 requests $0.0054 is used, so the 3rd (over $0.004 before it is even sent) never is.
    expect(model.requests).toHaveLength(2);
    expect((error as ReachExceededError).used).toBeGreaterThan(0.0054);
  });

  it("a deadline stops the run before the next request once the time is up", async () => {
    let clock = 0;
    const model = new ScriptedProvider(
      [
        (_request: ModelRequest) => {
          clock++;
          return { toolCalls: [{ name: "slow", input: {} }] };
        },
      ],
      { whenExhausted: "repeat-last" },
    );
    class Slow extends Agent {
      static methodOptions = { slow: { tool: true, description: "Slow work." } };
      async slow(): Promise<string> {
        await new Promise((resolve) => setTimeout(resolve, 40));
        return "ok";
      }
    }
    const error = await new Slow({ runtime: new Runtime({ provider: model, reach: { timeoutMs: 100 } }) })
      .ask("Go.")
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ dimension: "deadline", limit: 100 });
    expect(clock).toBeLessThanOrEqual(4);
  });

  it("a deadline that passes while a tool runs aborts the tool's signal and ends the turn with the deadline's ReachExceededError: the turn does not wait for the tool", async () => {
    // A deadline of 1 s: the tool starts well within it even on a loaded machine, then outlasts it.
    const model = new ScriptedProvider([{ toolCalls: [{ name: "crawl", input: {} }] }], { whenExhausted: "repeat-last" });
    let reason: unknown;
    let finished = false;
    let release = (): void => {};
    class Crawler extends Agent {
      static methodOptions = { crawl: { tool: true, description: "Crawl the web." } };
      // Notes that its signal fired, but goes on regardless: only the run's race can stop waiting for it.
      async crawl(): Promise<string> {
        const signal = currentSignal();
        signal?.addEventListener("abort", () => (reason = signal.reason));
        await new Promise<void>((resolve) => {
          const fallback = setTimeout(resolve, 30_000);
          release = () => {
            clearTimeout(fallback);
            resolve();
          };
        });
        finished = true;
        return "crawled";
      }
    }
    const error = await new Crawler({ runtime: new Runtime({ provider: model, reach: { timeoutMs: 1_000 } }) })
      .ask("Crawl.")
      .catch((caught: unknown) => caught);
    const finishedFirst = finished;
    release();
    expect(error).toBeInstanceOf(ReachExceededError);
    expect(error).toMatchObject({ dimension: "deadline", limit: 1_000 });
    // The tool's signal fired with that same error, and the turn ended before the tool did.
    expect(reason).toBe(error);
    expect(finishedFirst).toBe(false);
    expect(model.requests).toHaveLength(1);
  });

  it("a tool call the model asked for in an answer that came after the deadline never starts: the turn ends with the deadline's ReachExceededError", async () => {
    /**
     * Answers after 150 ms: the request was sent in time (recorded as it arrives), its answer would arrive
     * past a 100 ms deadline — which now cuts the request off (reach-deadline.test.ts), so the answer is dropped.
     */
    class LateModel extends ScriptedProvider {
      override async complete(request: ModelRequest, options?: ModelCallOptions): Promise<ModelResponse> {
        const answer = await super.complete(request, options);
        await new Promise((resolve) => setTimeout(resolve, 150));
        return answer;
      }
    }
    let started = false;
    class Sender extends Agent {
      static methodOptions = { send: { tool: true, description: "Send the report." } };
      send(): string {
        started = true;
        return "sent";
      }
    }
    const model = new LateModel([{ toolCalls: [{ name: "send", input: {} }] }, "done"]);
    const error = await new Sender({ runtime: new Runtime({ provider: model, reach: { timeoutMs: 100 } }) })
      .ask("Send it.")
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: "ReachExceededError", dimension: "deadline", limit: 100 });
    expect(started).toBe(false);
    expect(model.requests).toHaveLength(1);
  });
});

describe("currentReach, reach-status events, budgets from callers", () => {
  it("currentReach() shows the live budget; reach-status events follow each Agent entry and model response", async () => {
    const events: RunEvent[] = [];
    let seen: ReturnType<typeof currentReach>;
    class Looker extends Agent {
      static methodOptions = { look: { tool: true, description: "Look." } };
      look(): string {
        seen = currentReach();
        return "seen";
      }
      async run(): Promise<string> {
        return this.ask("Look.");
      }
    }
    const model = new ScriptedProvider([{ toolCalls: [{ name: "look", input: {} }], usage: { inputTokens: 10, outputTokens: 5 } }, "done"]);
    await new Looker({ runtime: new Runtime({ provider: model, reach: { maxLogicDepth: 4, maxTokens: 1_000 }, onEvent: (event) => events.push(event) }) }).run();
    expect(seen).toMatchObject({ depth: { used: 1, limit: 4 }, tokens: { used: 15, limit: 1_000 }, zone: expect.any(String) });
    const statuses = events.filter((event) => event.type === "reach-status");
    expect(statuses.length).toBeGreaterThanOrEqual(3);
    expect(statuses[0]).toMatchObject({ agent: "Looker", depth: { used: 1, limit: 4 } });
  });

  it("withReachBudget runs calls with what a caller had left, clamped to the local policy; childBudget() is what is left to pass on", async () => {
    let passedOn: ReturnType<typeof childBudget>;
    class Callee extends Agent {
      async run(): Promise<string> {
        passedOn = childBudget();
        return new Deeper().run();
      }
    }
    class Deeper extends Agent {
      async run(): Promise<string> {
        return "deep";
      }
    }
    // The caller had 2 levels left: Callee uses one, Deeper the other.
    await expect(withReachBudget({ depth: 2, tokens: 500 }, () => new Callee().run())).resolves.toBe("deep");
    expect(passedOn).toMatchObject({ depth: 1, tokens: 500 });
    // One level left: Deeper is refused. A header can never grant more than the local policy.
    await expect(withReachBudget({ depth: 1 }, () => new Callee().run())).rejects.toBeInstanceOf(ReachExceededError);
    await expect(withReachBudget({ depth: 0 }, () => new Callee().run())).rejects.toMatchObject({ dimension: "depth", used: 1, limit: 0 });
    const inflated = await withReachBudget({ depth: 50 }, () => new Callee().run(), { policy: new ReachPolicy({ maxLogicDepth: 1 }) }).catch((caught: unknown) => caught);
    expect(inflated).toMatchObject({ dimension: "depth", limit: 1 });
  });
});

describe("reachFetch", () => {
  it("passes on the budget left (X-Agent-Policy) and continues the caller's trace (traceparent)", async () => {
    const seen: { policy?: string; traceparent?: string } = {};
    const server = createServer((request, response) => {
      seen.policy = request.headers["x-agent-policy"] as string | undefined;
      seen.traceparent = request.headers["traceparent"] as string | undefined;
      response.end("ok");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
    class Caller extends Agent {
      async call(): Promise<string> {
        return (await reachFetch(url)).text();
      }
    }
    const incoming = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    try {
      await expect(withReachBudget({ depth: 3, tokens: 900 }, () => new Caller().call(), { traceparent: incoming })).resolves.toBe("ok");
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    // Caller's own entry used one level of the three.
    expect(decodePolicyHeader(seen.policy)).toMatchObject({ depth: 2, tokens: 900 });
    const trace = parseTraceparent(seen.traceparent)!;
    expect(trace.traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(trace.parentId).not.toBe("b7ad6b7169203331");
  });
});

describe("withReachBudget: a budget field that is no number", () => {
  it.each([
    ["deadline", Number.NaN, "NaN"],
    ["deadline", "soon", "'soon'"],
    ["tokens", Number.NaN, "NaN"],
    ["costUsd", -1, "-1"],
  ])("budget.%s = %p is a TypeError naming the field, before anything runs (a NaN deadline cut off every request at once: 'NaN ms elapsed, past the deadline of NaN ms')", (field, value, shown) => {
    let ran = false;
    const call = () =>
      withReachBudget({ depth: 3, [field]: value } as never, () => {
        ran = true;
      });
    expect(call).toThrow(TypeError);
    expect(call).toThrow(`withReachBudget(budget, fn): budget.${field} must be a non-negative number (or Infinity), or left out; got ${shown}`);
    expect(ran).toBe(false);
  });
});
