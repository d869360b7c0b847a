/**
 * The spend seam of the request gate (spend-reserver.ts): a run under
 * `withRunListener(…, { spend })` reserves each model request's estimate
 * before the provider sees it and settles it with the answer's usage; the
 * request asks for no more output than was reserved; a refusal (a
 * ReachError) stops the run before the request is sent; a request cancelled
 * before it was sent is released, and one that was sent and got no answer
 * (a provider error, a cancel) is charged as reserved.
 */
import { ReachError, ProviderError } from "@rein/guard";
import { Agent } from "../agent/agent";
import { ScriptedProvider } from "../model/scripted-provider";
import type { ModelCallOptions, ModelProvider, ModelRequest, ModelResponse } from "../model/model-provider";
import type { RunEvent } from "./runtime-events";
import { estimateTokens } from "./model-request-gate";
import { withRunListener } from "./run-listener";
import { Runtime } from "./runtime";
import { DEFAULT_RESERVED_OUTPUT_TOKENS, type SpendAmount, type SpendReserver } from "./spend-reserver";

const OUT = DEFAULT_RESERVED_OUTPUT_TOKENS;

class Writer extends Agent {}

/** A reserver that keeps a log of what happened, in order, and refuses once `tokensLeft` cannot hold an estimate. */
function loggingReserver(tokensLeft: number, sent: () => number) {
  const log: string[] = [];
  let left = tokensLeft;
  const reserver: SpendReserver = {
    async reserve(estimate: SpendAmount) {
      if (estimate.tokens > left) {
        log.push(`refuse ${estimate.tokens} (sent ${sent()})`);
        throw new ReachError(`spend cap: ${estimate.tokens} tokens asked, ${left} left`);
      }
      left -= estimate.tokens;
      log.push(`reserve ${estimate.tokens} cost ${estimate.costUsd} (sent ${sent()})`);
      return {
        settle: async (used) => {
          left += estimate.tokens - used.tokens;
          log.push(`settle ${used.tokens} cost ${used.costUsd} (sent ${sent()})`);
        },
        release: async () => {
          left += estimate.tokens;
          log.push(`release ${estimate.tokens} (sent ${sent()})`);
        },
      };
    },
  };
  return { reserver, log, left: () => left };
}

/** What the first request of "Go." is reserved for (the same prompt as the run measured against it). */
async function firstEstimate(make: () => Agent & { ask(task: string): Promise<unknown> }): Promise<number> {
  const probe = loggingReserver(1e9, () => 0);
  await withRunListener(() => undefined, () => make().ask("Go."), { spend: probe.reserver });
  return Number(/reserve (\d+)/.exec(probe.log[0]!)![1]);
}

describe("the request gate reserves spend before a request and settles it after", () => {
  it("reserves the input estimate plus the output limit before the provider is asked, then settles the real usage and prices both", async () => {
    const model = new ScriptedProvider([{ text: "done", usage: { inputTokens: 30, outputTokens: 12 } }]);
    const pricing = { m: { inputPerMTok: 1_000_000, outputPerMTok: 2_000_000 } };
    const agent = new Writer({ runtime: new Runtime({ provider: model, model: "m", pricing }) });
    const { reserver, log, left } = loggingReserver(10_000, () => model.requests.length);
    await withRunListener(() => undefined, () => agent.ask("Write."), { spend: reserver });
    expect(log).toHaveLength(2);
    const [reserved, settled] = log;
    const tokens = Number(/reserve (\d+)/.exec(reserved!)![1]);
    const input = tokens - OUT;
    expect(input).toBeGreaterThan(0);
    // Priced with the run's table: the input estimate at $1/token, the output limit at $2/token.
    expect(reserved).toBe(`reserve ${tokens} cost ${input * 1 + OUT * 2} (sent 0)`);
    expect(settled).toBe(`settle 42 cost ${30 * 1 + 12 * 2} (sent 1)`);
    expect(left()).toBe(10_000 - 42);
  });

  it("a model without a price is reserved with costUsd undefined", async () => {
    const model = new ScriptedProvider([{ text: "done", usage: { inputTokens: 3, outputTokens: 2 } }]);
    const agent = new Writer({ runtime: new Runtime({ provider: model, model: "unpriced", pricing: { other: { inputPerMTok: 1, outputPerMTok: 1 } } }) });
    const { reserver, log } = loggingReserver(100_000, () => model.requests.length);
    await withRunListener(() => undefined, () => agent.ask("Write."), { spend: reserver });
    expect(log[0]).toMatch(/^reserve \d+ cost undefined \(sent 0\)$/);
    expect(log[1]).toBe("settle 5 cost undefined (sent 1)");
  });

  it("a refused reservation stops the run with the ReachError before the request is sent; what was settled stays", async () => {
    const turn = { toolCalls: [{ name: "note", input: {} }], usage: { inputTokens: 10, outputTokens: 5 } };
    const model = new ScriptedProvider([turn, turn, turn, { text: "done" }]);
    class Noter extends Agent {
      static methodOptions = { note: { tool: true, description: "Write a note." } };
      note(): string {
        return "noted";
      }
    }
    const agent = new Noter({ runtime: new Runtime({ provider: model }) });
    // Room for the first reservation and, once it settled to 15 tokens, not for the second (a longer conversation).
    const first = await firstEstimate(() => new Noter({ runtime: new Runtime({ provider: new ScriptedProvider([{ text: "x" }]) }) }));
    const limited = loggingReserver(first + 15, () => model.requests.length);
    const run = withRunListener(() => undefined, () => agent.ask("Go."), { spend: limited.reserver });
    await expect(run).rejects.toThrow(ReachError);
    expect(limited.log.filter((line) => line.startsWith("settle"))).toEqual(["settle 15 cost undefined (sent 1)"]);
    expect(limited.log.at(-1)).toMatch(/^refuse \d+ \(sent 1\)$/);
    // The refused request never reached the provider.
    expect(model.requests).toHaveLength(1);
  });

  it("the request asks the provider for the output that was reserved: 4,096 tokens when it set no limit (none is added without a reserver)", async () => {
    const model = new ScriptedProvider([{ text: "done", usage: { inputTokens: 3, outputTokens: 2 } }, { text: "again" }]);
    const agent = new Writer({ runtime: new Runtime({ provider: model }) });
    const { reserver, log } = loggingReserver(100_000, () => model.requests.length);
    await withRunListener(() => undefined, () => agent.ask("Write."), { spend: reserver });
    expect(model.requests[0]!.maxOutputTokens).toBe(OUT);
    // The reservation is the input estimate plus exactly that limit.
    const sent = model.requests[0]!;
    expect(Number(/reserve (\d+)/.exec(log[0]!)![1])).toBe(estimateTokens(sent.system, sent.messages, sent.tools) + OUT);
    await agent.ask("Write more.");
    expect(model.requests[1]!.maxOutputTokens).toBeUndefined();
  });

  it("a request the provider fails once it was sent is charged as reserved: the provider had it, and nothing says what it billed", async () => {
    const model = new ScriptedProvider([new ProviderError("upstream down", { provider: "scripted", status: 503 })]);
    const agent = new Writer({ runtime: new Runtime({ provider: model }) });
    const { reserver, log, left } = loggingReserver(50_000, () => model.requests.length);
    await expect(withRunListener(() => undefined, () => agent.ask("Write."), { spend: reserver })).rejects.toThrow(/upstream down/);
    expect(log).toHaveLength(2);
    const reserved = Number(/reserve (\d+)/.exec(log[0]!)![1]);
    expect(log[1]).toBe(`settle ${reserved} cost undefined (sent 1)`);
    expect(left()).toBe(50_000 - reserved);
  });

  it("a request cancelled after it was sent is charged as reserved; one cancelled before it was sent is released, all of it", async () => {
    let calls = 0;
    const hanging: ModelProvider = {
      specificationVersion: "rein-model-v1",
      providerId: "hanging",
      modelId: "m",
      complete(_request: ModelRequest, options?: ModelCallOptions): Promise<ModelResponse> {
        calls++;
        controller.abort(new Error("client hung up"));
        return new Promise((_, reject) => options?.signal?.addEventListener("abort", () => reject(options.signal!.reason), { once: true }));
      },
      async *stream(request: ModelRequest, options?: ModelCallOptions) {
        yield { type: "response" as const, response: await this.complete(request, options) };
      },
    };
    let controller = new AbortController();
    const sent = loggingReserver(50_000, () => calls);
    const agent = new Writer({ runtime: new Runtime({ provider: hanging }) });
    await expect(withRunListener(() => undefined, () => agent.ask("Write."), { spend: sent.reserver, signal: controller.signal })).rejects.toThrow();
    const reserved = Number(/reserve (\d+)/.exec(sent.log[0]!)![1]);
    expect(sent.log).toEqual([`reserve ${reserved} cost undefined (sent 0)`, `settle ${reserved} cost undefined (sent 1)`]);
    expect(sent.left()).toBe(50_000 - reserved);
    // Cancelled by a listener of the model-request event, right before the provider would be called.
    controller = new AbortController();
    const unsent = loggingReserver(50_000, () => calls);
    const cancel = (event: RunEvent) => event.type === "model-request" && controller.abort(new Error("client hung up"));
    await expect(withRunListener(cancel, () => agent.ask("Write."), { spend: unsent.reserver, signal: controller.signal })).rejects.toThrow();
    expect(calls).toBe(1);
    expect(unsent.log).toEqual([expect.stringMatching(/^reserve \d+ cost undefined \(sent 1\)$/), expect.stringMatching(/^release \d+ \(sent 1\)$/)]);
    expect(unsent.left()).toBe(50_000);
  });

  it("a spend that is not a SpendReserver is a TypeError naming the option", () => {
    expect(() => withRunListener(() => undefined, () => 1, { spend: {} as never })).toThrow(/spend must be a SpendReserver/);
  });
});

describe("a slow key store cannot hold the run", () => {
  /** A reserver whose answer waits until the test lets it go; logs what happened to the hold. */
  function stalledReserver() {
    const log: string[] = [];
    let answer = (): void => {};
    const reserver: SpendReserver = {
      reserve: (estimate: SpendAmount) =>
        new Promise((resolve) => {
          log.push("asked");
          answer = () =>
            resolve({
              settle: async () => void log.push("settle"),
              release: async () => void log.push(`release ${estimate.tokens}`),
            });
        }),
    };
    return { reserver, log, answer: () => answer() };
  }

  it("the reach deadline ends a run waiting on its reservation; a hold that arrives later is released, and nothing is sent", async () => {
    const model = new ScriptedProvider(["never sent"]);
    const stalled = stalledReserver();
    // 1 s: the request reaches the store well before the deadline even on a loaded machine.
    const agent = new Writer({ runtime: new Runtime({ provider: model, reach: { timeoutMs: 1_000 } }) });
    const error = await withRunListener(() => undefined, () => agent.ask("Write."), { spend: stalled.reserver }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: "ReachExceededError", dimension: "deadline" });
    expect(model.requests).toHaveLength(0);
    stalled.answer();
    await new Promise((resolve) => setImmediate(resolve));
    expect(stalled.log).toEqual(["asked", expect.stringMatching(/^release \d+$/)]);
  });

  it("a cancel ends a run waiting on its reservation with the cancel", async () => {
    const model = new ScriptedProvider(["never sent"]);
    const stalled = stalledReserver();
    const controller = new AbortController();
    const agent = new Writer({ runtime: new Runtime({ provider: model }) });
    const run = withRunListener(() => undefined, () => agent.ask("Write.", { signal: controller.signal }), { spend: stalled.reserver });
    while (stalled.log.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(new Error("stop"));
    await expect(run).rejects.toThrow("stop");
    expect(model.requests).toHaveLength(0);
    stalled.answer();
    await new Promise((resolve) => setImmediate(resolve));
    expect(stalled.log).toEqual(["asked", expect.stringMatching(/^release \d+$/)]);
  });
});
