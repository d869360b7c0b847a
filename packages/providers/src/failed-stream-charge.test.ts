/**
 * A stream that fails after the provider counted the request is charged
 * what the provider reported: the reach token budget (so `maxTokens` covers
 * it), the run's usage, and a key's spend caps (never less than reported).
 * Through the real Anthropic SDK against the local fixture server, for
 * `agent.stream()` and for `agent.ask()` run as a server runs it (under
 * `withRunListener`, where the answer streams).
 */
import {
  Agent,
  currentReach,
  OverloadedError,
  ProviderError,
  Runtime,
  withReachBudget,
  withRunListener,
  type RunEvent,
  type SpendAmount,
  type SpendReserver,
} from "@rein/core";
import { failureOf, readFixture, useFixtureServer, type FixtureReply } from "./__fixtures__/fixture-server";
import { join } from "node:path";
import { AnthropicProvider } from "./anthropic/anthropic-provider";

const server = useFixtureServer();
const anthropicFixtures = join(__dirname, "anthropic");

function agent(): Agent {
  const provider = new AnthropicProvider("test-model", { apiKey: "test-key", baseURL: server().url, maxRetries: 0 });
  return new Agent({ runtime: new Runtime({ provider }) });
}

/**
 * messages-stream-text.sse reset right after its text deltas: message_start reported 1,830 input tokens and 1 output
 * token; the 33 characters of text that streamed count 9 (4 characters a token), which the output is raised to.
 */
function droppedAfterText(): FixtureReply {
  const sse = readFixture(anthropicFixtures, "messages-stream-text.sse");
  return { sse, cutAfterBytes: Buffer.byteLength(sse.slice(0, sse.indexOf("event: content_block_stop")), "utf8"), abrupt: true };
}
const droppedAfterTextTokens = 1_830 + Math.ceil("Paris will be sunny, around 21°C.".length / 4);

/** An overloaded_error event after a message_start that reported `inputTokens` input tokens and 1 output token. */
function overloadedAfterStart(inputTokens = 24): FixtureReply {
  const sse = readFixture(anthropicFixtures, "messages-stream-overloaded.sse").replace('"input_tokens":24', `"input_tokens":${inputTokens}`);
  return { sse };
}

/** Under a reach budget of `tokens`: runs `fn`, then reads the tokens the budget was charged. */
async function tokensCharged(tokens: number, fn: () => Promise<unknown>): Promise<{ error: unknown; used: number }> {
  return withReachBudget({ depth: 5, tokens }, async () => {
    const error = await failureOf(fn());
    return { error, used: currentReach()!.tokens.used };
  });
}

describe("a stream that fails after the provider reported usage", () => {
  it("agent.stream(): a connection dropped after message_start charges the reach budget what message_start reported (output raised to the text that streamed), and the run's usage shows it", async () => {
    server().reply(droppedAfterText());
    const model = agent();
    let result: Awaited<ReturnType<typeof model.stream>["result"]> | undefined;
    const { error, used } = await tokensCharged(100_000, async () => {
      const run = model.stream("Weather in Paris?");
      result = await run.result;
      throw result.error;
    });
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).message).toMatch(/^anthropic stream ended early: /);
    expect(used).toBe(droppedAfterTextTokens);
    expect(result!.status).toBe("error");
    expect(result!.usage).toEqual({ inputTokens: 1830, outputTokens: droppedAfterTextTokens - 1830, cachedInputTokens: 1800, cacheCreationInputTokens: 0 });
  });

  it("agent.ask() under withRunListener: an error event after message_start charges the reach budget what message_start reported", async () => {
    server().reply(overloadedAfterStart());
    const model = agent();
    const events: RunEvent[] = [];
    const { error, used } = await tokensCharged(100_000, () => withRunListener((event) => events.push(event), () => model.ask("Weather in Paris?")));
    expect(error).toBeInstanceOf(OverloadedError);
    expect(used).toBe(25);
    // Listeners see it too: the last reach-status the run reported counts the 25 tokens.
    const statuses = events.filter((event) => event.type === "reach-status") as unknown as { tokens: { used: number } }[];
    expect(statuses[statuses.length - 1].tokens.used).toBe(25);
  });

  it("maxTokens counts it: the next request, which would cross the budget with it, is refused before it is sent", async () => {
    server().reply(droppedAfterText(), { json: { error: "must never be sent" } });
    const model = agent();
    const outcome = await withReachBudget({ depth: 5, tokens: droppedAfterTextTokens + 1 }, async () => {
      const first = await failureOf(withRunListener(() => undefined, () => model.ask("Weather in Paris?")));
      const second = await failureOf(model.ask("And in Lyon?"));
      return { first, second };
    });
    expect(outcome.first).toBeInstanceOf(ProviderError);
    // ReachExceededError (from @rein/guard, which this package does not depend on), on the token budget.
    expect(outcome.second).toMatchObject({ name: "ReachExceededError", dimension: "tokens", limit: droppedAfterTextTokens + 1 });
    expect((outcome.second as { used: number }).used).toBeGreaterThan(droppedAfterTextTokens + 1);
    expect(server().requests).toHaveLength(1);
  });

  it("a key's spend cap is settled with no less than the provider reported, when that is more than was reserved", async () => {
    // 20,000 input tokens reported: far more than the short prompt's estimate plus the 4,096 output reserved.
    server().reply(overloadedAfterStart(20_000));
    const settled: SpendAmount[] = [];
    const reserved: SpendAmount[] = [];
    const spend: SpendReserver = {
      async reserve(estimate) {
        reserved.push(estimate);
        return { settle: async (used) => void settled.push(used), release: async () => undefined };
      },
    };
    const error = await failureOf(withRunListener(() => undefined, () => agent().ask("Weather in Paris?"), { spend }));
    expect(error).toBeInstanceOf(OverloadedError);
    expect(reserved).toHaveLength(1);
    expect(reserved[0].tokens).toBeLessThan(20_001);
    expect(settled).toEqual([{ tokens: 20_001, costUsd: undefined }]);
  });

  it("a key's spend cap is still settled with the whole reservation when that is more than the provider reported", async () => {
    server().reply(overloadedAfterStart());
    const settled: SpendAmount[] = [];
    const reserved: SpendAmount[] = [];
    const spend: SpendReserver = {
      async reserve(estimate) {
        reserved.push(estimate);
        return { settle: async (used) => void settled.push(used), release: async () => undefined };
      },
    };
    await failureOf(withRunListener(() => undefined, () => agent().ask("Weather in Paris?"), { spend }));
    expect(settled).toEqual(reserved);
  });
});
