/**
 * Usage in an Anthropic stream, through the real SDK against the local
 * fixture server: `message_start` reports the input (and a first output
 * count), `message_delta` the cumulative output at the end. A
 * `message_delta` without `usage` keeps the streamed turn and the counts
 * `message_start` reported.
 */
import { ProviderError, type ModelRequest } from "@rein/core";
import { collectStream, failureOf, readFixture, useFixtureServer } from "../__fixtures__/fixture-server";
import { firstUserTurn, system } from "../__fixtures__/weather-conversation";
import { AnthropicProvider } from "./anthropic-provider";

const server = useFixtureServer();

function provider(): AnthropicProvider {
  return new AnthropicProvider("test-model", { apiKey: "test-key", baseURL: server().url, maxRetries: 0 });
}

const request: ModelRequest = { system, messages: [firstUserTurn], tools: [] };
const streamedText = "Paris will be sunny, around 21°C.";
const messageDelta = '"usage":{"output_tokens":14}';
/** What messages-stream-text.sse's message_start reports: 30 uncached + 1,800 cache-read input tokens, 1 output token. */
const startUsage = { inputTokens: 1830, outputTokens: 1, cachedInputTokens: 1800, cacheCreationInputTokens: 0 };

function textStream(): string {
  return readFixture(__dirname, "messages-stream-text.sse");
}

describe("Anthropic stream usage", () => {
  it.each([
    ["without usage", textStream().replace(`,${messageDelta}`, "")],
    ["with usage null", textStream().replace(messageDelta, '"usage":null')],
  ])("a message_delta %s keeps the streamed turn, with the usage message_start reported", async (_label, sse) => {
    server().reply({ sse });
    const events = await collectStream(provider().stream(request));
    expect(events.filter((event) => event.type === "text-delta").map((event) => event.text).join("")).toBe(streamedText);
    expect(events[events.length - 1]).toEqual({
      type: "response",
      response: { content: [{ type: "text", text: streamedText }], stopReason: "end_turn", usage: startUsage, model: "test-model" },
    });
  });

  it("a stream with no message_delta at all keeps the streamed turn, with the usage message_start reported", async () => {
    server().reply({ sse: textStream().replace(/event: message_delta\ndata: .*\n\n/, "") });
    const events = await collectStream(provider().stream(request));
    expect(events[events.length - 1]).toEqual({
      type: "response",
      response: { content: [{ type: "text", text: streamedText }], stopReason: "other", usage: startUsage, model: "test-model" },
    });
  });

  it("a message_delta whose usage is not an object is still a malformed event", async () => {
    server().reply({ sse: textStream().replace(messageDelta, '"usage":"14"') });
    const error = await failureOf(collectStream(provider().stream(request)));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).message).toBe(
      'anthropic sent a malformed stream event: usage is the string "14" (expected an object)',
    );
  });
});
