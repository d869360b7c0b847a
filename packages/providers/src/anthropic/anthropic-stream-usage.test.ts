/**
 * Usage in an Anthropic stream, through the real SDK against the local
 * fixture server: `message_start` reports the input (and a first output
 * count), `message_delta` the cumulative output at the end. A
 * `message_delta` without `usage` keeps the streamed turn and the counts
 * `message_start` reported; a stream that fails after `message_start`
 * fails with those counts on the error (`reportedUsage`), for the runtime
 * to charge.
 */
import { OverloadedError, ProviderError, ProviderTimeoutError, type ModelRequest } from "@rein/core";
import { collectStream, failureOf, readFixture, useFixtureServer } from "../__fixtures__/fixture-server";
import { firstUserTurn, system } from "../__fixtures__/weather-conversation";
import { AnthropicProvider, type AnthropicProviderSettings } from "./anthropic-provider";

const server = useFixtureServer();

function provider(settings: AnthropicProviderSettings = {}): AnthropicProvider {
  return new AnthropicProvider("test-model", { apiKey: "test-key", baseURL: server().url, maxRetries: 0, ...settings });
}

const request: ModelRequest = { system, messages: [firstUserTurn], tools: [] };
const streamedText = "Paris will be sunny, around 21°C.";
const messageDelta = '"usage":{"output_tokens":14}';
/** What messages-stream-text.sse's message_start reports: 30 uncached + 1,800 cache-read input tokens, 1 output token. */
const startUsage = { inputTokens: 1830, outputTokens: 1, cachedInputTokens: 1800, cacheCreationInputTokens: 0 };
/**
 * What a stream cut after its text is charged: message_start's counts, its 1 output token raised to an estimate of
 * the text that streamed (4 characters a token), which the provider wrote and bills.
 */
const cutUsage = { ...startUsage, outputTokens: Math.ceil(streamedText.length / 4) };

function textStream(): string {
  return readFixture(__dirname, "messages-stream-text.sse");
}

/** The fixture stream cut right after its last text delta: message_start and every delta came, nothing after. */
function cutAfterDeltas(): { sse: string; bytes: number } {
  const sse = textStream();
  return { sse, bytes: Buffer.byteLength(sse.slice(0, sse.indexOf("event: content_block_stop")), "utf8") };
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

  it("an error event after message_start fails with the usage message_start reported on the error", async () => {
    server().reply({ sse: readFixture(__dirname, "messages-stream-overloaded.sse") });
    const error = await failureOf(collectStream(provider().stream(request)));
    expect(error).toBeInstanceOf(OverloadedError);
    expect((error as OverloadedError).reportedUsage).toEqual({ inputTokens: 24, outputTokens: 1, cachedInputTokens: 0, cacheCreationInputTokens: 0 });
  });

  it.each([
    ["closed cleanly", false],
    ["reset", true],
  ])("a connection %s after message_start and the text deltas fails as ended early, with message_start's usage on the error, output raised to what streamed", async (_label, abrupt) => {
    const { sse, bytes } = cutAfterDeltas();
    server().reply({ sse, cutAfterBytes: bytes, abrupt });
    const error = await failureOf(collectStream(provider().stream(request)));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).message).toMatch(/^anthropic stream ended early: /);
    expect((error as ProviderError).reportedUsage).toEqual(cutUsage);
  });

  it("a stream that goes silent after message_start fails with ProviderTimeoutError carrying message_start's usage, output raised to what streamed", async () => {
    const { sse, bytes } = cutAfterDeltas();
    server().reply({ sse, stallAfterBytes: bytes });
    const error = await failureOf(collectStream(provider({ idleTimeoutMs: 200 }).stream(request)));
    expect(error).toBeInstanceOf(ProviderTimeoutError);
    expect((error as ProviderTimeoutError).limit).toBe("idleTimeoutMs");
    expect((error as ProviderTimeoutError).reportedUsage).toEqual(cutUsage);
  });

  it("a caller's abort after message_start rejects with the caller's own reason, left as it is", async () => {
    server().reply({ sse: textStream() });
    const controller = new AbortController();
    const reason = new ProviderError("the caller stopped", { provider: "caller" });
    const consume = async () => {
      for await (const event of provider().stream(request, { signal: controller.signal })) {
        if (event.type === "text-delta") controller.abort(reason);
      }
    };
    const error = await failureOf(consume());
    expect(error).toBe(reason);
    expect(reason.reportedUsage).toBeUndefined();
  });

  it("a failure before message_start reports no usage", async () => {
    server().reply({ status: 529, json: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } });
    const error = await failureOf(collectStream(provider().stream(request)));
    expect(error).toBeInstanceOf(OverloadedError);
    expect((error as OverloadedError).reportedUsage).toBeUndefined();
  });
});
