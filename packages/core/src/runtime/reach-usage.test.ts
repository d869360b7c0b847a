/**
 * The reach token budget is charged as the run ledger and the spend caps
 * are: never a refund that lets a run spend past maxTokens, never a NaN that
 * makes every check pass (found by an attack review, 2026-12-03: 20 requests
 * under maxTokens 1,600), never a free request — an answer's count that is
 * missing, negative or NaN is estimated from what the request visibly used.
 */
import { OverloadedError, ReachExceededError } from "@rein/guard";
import { Agent } from "../agent/agent";
import type { ModelProvider, ModelResponse, Usage } from "../model/model-provider";
import { currentReach, withReachBudget } from "./reach";
import { Runtime } from "./runtime";

/** A custom provider (complete() only, stream() yields its answer whole) answering the nth request (from 1) with `answer(n)`. */
function customProvider(providerId: string, answer: (n: number) => ModelResponse): ModelProvider & { requests: number } {
  const provider = {
    specificationVersion: "rein-model-v1" as const,
    providerId,
    modelId: "m",
    requests: 0,
    async complete(): Promise<ModelResponse> {
      return answer(++provider.requests);
    },
    async *stream() {
      yield { type: "response" as const, response: await provider.complete() };
    },
  };
  return provider;
}

/** A provider that calls the tool `more` every time, reporting `usage` for its first answer and 400 + 100 tokens after. */
function spender(first: Usage): ModelProvider & { requests: number } {
  return customProvider("custom", (n) => ({
    content: [{ type: "tool_use", id: `call_${n}`, name: "more", input: { n } }],
    stopReason: "tool_use",
    usage: n === 1 ? first : { inputTokens: 400, outputTokens: 100 },
  }));
}

class Spender extends Agent {
  static methodOptions = { more: { tool: true, description: "Do more." } };
  more(): string {
    return "ok";
  }
}

describe("the reach token budget when a provider reports usage wrong", () => {
  it.each([
    ["negative", { inputTokens: -1_000_000, outputTokens: 0 }],
    ["NaN", { inputTokens: Number.NaN, outputTokens: 0 }],
    ["missing outputTokens", { inputTokens: 400 } as unknown as Usage],
  ])("a %s count neither refunds nor disables maxTokens", async (_label, first) => {
    const provider = spender(first);
    const runtime = new Runtime({ provider, reach: { maxTokens: 1_600 }, maxIterations: 20 });
    const error = await new Spender({ runtime }).ask("Go.").catch((caught: unknown) => caught);
    expect(String(error)).toMatch(/^ReachExceededError/);
    expect(error).toBeInstanceOf(ReachExceededError);
    // 1,600 tokens: at most the first answer and three of 500 tokens before the next would cross it.
    expect(provider.requests).toBeLessThanOrEqual(4);
  });
});

describe("a provider that reports no usage is charged an estimate of what it visibly used", () => {
  /** A provider answering `answers` in turn (the last one again once they run out), with no usage at all, or with `usage`. */
  function unmetered(answers: readonly ModelResponse["content"][], usage?: unknown): ModelProvider & { requests: number } {
    return customProvider("unmetered", (n) => {
      const content = answers[Math.min(n, answers.length) - 1]!;
      return { content, stopReason: content.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn", ...(usage === undefined ? {} : { usage }) } as ModelResponse;
    });
  }
  const more: ModelResponse["content"] = [{ type: "tool_use", id: "call_more", name: "more", input: { n: 1 } }];

  it("a runaway whose provider answers without usage is stopped by maxTokens (it was charged 0 and ran to maxIterations)", async () => {
    const provider = unmetered([more]);
    const runtime = new Runtime({ provider, reach: { maxTokens: 1_600 }, maxIterations: 40 });
    const error = await new Spender({ runtime }).ask("Go.").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ReachExceededError);
    expect((error as ReachExceededError).dimension).toBe("tokens");
    expect(provider.requests).toBeGreaterThan(1);
    expect(provider.requests).toBeLessThan(40);
  });

  it("the run's usage and each model-response event carry the estimate: input from the request's size, output 4 characters a token of what came back", async () => {
    const answer: ModelResponse["content"] = [{ type: "text", text: "x".repeat(400) }];
    const seen: Usage[] = [];
    const runtime = new Runtime({ provider: unmetered([more, answer]), onEvent: (event) => void (event.type === "model-response" && seen.push(event.usage)) });
    const result = await runtime.exec({ content: "Go." });
    expect(seen).toHaveLength(2);
    expect(seen[1]!.outputTokens).toBe(Math.ceil(JSON.stringify(answer).length / 4));
    expect(seen[1]!.outputTokens).toBeGreaterThanOrEqual(100);
    // The second request carries the first answer and its tool result: a larger input than the first.
    expect(seen[0]!.inputTokens).toBeGreaterThan(0);
    expect(seen[1]!.inputTokens).toBeGreaterThan(seen[0]!.inputTokens);
    expect(result.usage).toMatchObject({ inputTokens: seen[0]!.inputTokens + seen[1]!.inputTokens, outputTokens: seen[0]!.outputTokens + seen[1]!.outputTokens });
  });

  it("a count of 0 is taken at its word; a missing count beside a given one is estimated alone", async () => {
    const zero = await new Runtime({ provider: unmetered([[{ type: "text", text: "done" }]], { inputTokens: 0, outputTokens: 0 }) }).exec({ content: "Go." });
    expect(zero.usage).toMatchObject({ inputTokens: 0, outputTokens: 0 });
    const half = await new Runtime({ provider: unmetered([[{ type: "text", text: "done" }]], { inputTokens: 7 }) }).exec({ content: "Go." });
    expect(half.usage).toMatchObject({ inputTokens: 7, outputTokens: Math.ceil(JSON.stringify([{ type: "text", text: "done" }]).length / 4) });
  });
});

describe("the reach token budget when a request fails after the provider counted it", () => {
  /** A provider whose complete() fails, every time, with an OverloadedError carrying the usage reported before it failed. */
  function failingAfterCount(): ModelProvider & { requests: number } {
    const provider = {
      specificationVersion: "rein-model-v1" as const,
      providerId: "custom",
      modelId: "m",
      requests: 0,
      async complete(): Promise<ModelResponse> {
        provider.requests++;
        throw new OverloadedError("overloaded mid-answer", { provider: "custom", reportedUsage: { inputTokens: 900, outputTokens: 1 } });
      },
      async *stream() {
        yield { type: "response" as const, response: await provider.complete() };
      },
    };
    return provider;
  }

  it("ask() charges maxTokens what the failed request's provider reported, though it used complete()", async () => {
    const provider = failingAfterCount();
    const agent = new Spender({ runtime: new Runtime({ provider }) });
    const outcome = await withReachBudget({ depth: 5, tokens: 905 }, async () => {
      const first = await agent.ask("Go.").catch((caught: unknown) => caught);
      const used = currentReach()!.tokens.used;
      const second = await agent.ask("Again.").catch((caught: unknown) => caught);
      return { first, used, second };
    });
    expect(outcome.first).toBeInstanceOf(OverloadedError);
    expect(outcome.used).toBe(901);
    // 901 charged: the second request's input estimate would cross 905, so it is never sent.
    expect(outcome.second).toBeInstanceOf(ReachExceededError);
    expect(provider.requests).toBe(1);
  });
});

describe("what a failed request's provider reported, charged once and never in place of its error", () => {
  /** A provider whose complete() fails with an OverloadedError reporting `reportedUsage` (a custom provider, in JavaScript). */
  function failingWith(reportedUsage: unknown): ModelProvider {
    return {
      specificationVersion: "rein-model-v1" as const,
      providerId: "custom",
      modelId: "m",
      async complete(): Promise<ModelResponse> {
        throw new OverloadedError("overloaded mid-answer", { provider: "custom", reportedUsage: reportedUsage as Usage });
      },
      async *stream(request) {
        yield { type: "response" as const, response: await this.complete(request) };
      },
    };
  }

  it("a reportedUsage of null is charged as nothing: the run fails with the provider's error, not a TypeError from reading it", async () => {
    const agent = new Agent({ runtime: new Runtime({ provider: failingWith(null) }) });
    const outcome = await withReachBudget({ depth: 5, tokens: 10_000 }, async () => {
      const run = agent.stream("Go.");
      const result = await run.result;
      return { result, used: currentReach()!.tokens.used };
    });
    expect(outcome.result.error).toBeInstanceOf(OverloadedError);
    expect(outcome.result.usage).toMatchObject({ inputTokens: 0, outputTokens: 0 });
    expect(outcome.used).toBe(0);
  });

  it("a provider that answers through an agent: the agent's failed request is charged once to the reach budget and the run's usage, not again by the request that waited on it", async () => {
    const inner = new Agent({ runtime: new Runtime({ provider: failingWith({ inputTokens: 900, outputTokens: 1 }) }) });
    /** Answers each request by asking `inner`: the failed request of `inner` fails this one too, with the same error. */
    const router: ModelProvider = {
      specificationVersion: "rein-model-v1" as const,
      providerId: "router",
      modelId: "m",
      async complete(): Promise<ModelResponse> {
        const text = await inner.ask("Answer for me.");
        return { content: [{ type: "text", text }], stopReason: "end_turn", usage: { inputTokens: 0, outputTokens: 0 } };
      },
      async *stream(request) {
        yield { type: "response" as const, response: await this.complete(request) };
      },
    };
    const agent = new Agent({ runtime: new Runtime({ provider: router }) });
    const outcome = await withReachBudget({ depth: 5, tokens: 100_000 }, async () => {
      const result = await agent.stream("Go.").result;
      return { result, used: currentReach()!.tokens.used };
    });
    expect(outcome.result.error).toBeInstanceOf(OverloadedError);
    // One request was billed 901 tokens: charged once.
    expect(outcome.used).toBe(901);
    expect(outcome.result.usage).toMatchObject({ inputTokens: 900, outputTokens: 1 });
  });
});
