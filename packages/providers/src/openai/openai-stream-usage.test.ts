/**
 * What an OpenAI stream that fails before its end reported of its usage,
 * through the real SDK against the local fixture server. OpenAI itself
 * reports usage only at the end (the chat usage chunk, the Responses final
 * event), so a stream cut before it reported nothing; some servers report
 * more (usage on every chat chunk, usage in `response.failed`), and that is
 * on the error as `reportedUsage`, for the runtime to charge.
 */
import { Agent, ProviderError, RateLimitError, Runtime, currentReach, withReachBudget, type ModelRequest, type ModelResponse, type ModelStreamEvent } from "@rein/core";
import { collectStream, failureOf, readFixture, useFixtureServer } from "../__fixtures__/fixture-server";
import { firstUserTurn, system } from "../__fixtures__/weather-conversation";
import { OpenAIProvider } from "./openai-provider";

const server = useFixtureServer();

function provider(api: "chat" | "responses"): OpenAIProvider {
  return new OpenAIProvider("test-model", { api, apiKey: "test-key", baseURL: `${server().url}/v1`, maxRetries: 0 });
}

const request: ModelRequest = { system, messages: [firstUserTurn], tools: [] };

/** `sse` cut (connection reset) right before the first line containing `marker`. */
function cutBefore(sse: string, marker: string) {
  return { sse, cutAfterBytes: Buffer.byteLength(sse.slice(0, sse.indexOf(marker)), "utf8"), abrupt: true };
}

/** The fixture's response.failed event, its usage set to `usage` (JSON text). */
function failedWithUsage(usage: string): string {
  return readFixture(__dirname, "responses-stream-failed.sse").replace(/("type":"response\.failed".*)"usage":null/, `$1"usage":${usage}`);
}

describe("OpenAI stream usage when the stream fails", () => {
  // The same cut, chat and Responses: what the wire body held but the stream options is what the estimate measures.
  it.each([
    ["a chat stream cut before its usage chunk reported nothing: the error carries the estimate of what was sent and what streamed; cut before any chunk, nothing", "chat", "chat-stream-text.sse", '"finish_reason":"stop"', ["stream", "stream_options"]],
    ["a Responses stream cut before its final event reported nothing: the error carries the estimate of what was sent and what streamed; cut before any event, nothing", "responses", "responses-stream-text.sse", '"type":"response.completed"', ["stream"]],
  ] as const)("%s", async (_name, api, fixture, end, streamKeys) => {
    server().reply(cutBefore(readFixture(__dirname, fixture), end));
    const streamed: ModelStreamEvent[] = [];
    const error = await failureOf(
      (async () => {
        for await (const event of provider(api).stream(request)) streamed.push(event);
      })(),
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).message).toMatch(/^openai stream ended early: /);
    const text = streamed.flatMap((event) => (event.type === "text-delta" ? [event.text] : [])).join("");
    expect(text.length).toBeGreaterThan(0);
    const sent = Object.fromEntries(Object.entries(server().requests[0]!.body as Record<string, unknown>).filter(([key]) => !(streamKeys as readonly string[]).includes(key)));
    expect((error as ProviderError).reportedUsage).toEqual({ inputTokens: Math.ceil(JSON.stringify(sent).length / 4), outputTokens: Math.ceil(text.length / 4), cachedInputTokens: 0, cacheCreationInputTokens: 0 });
    // Nothing at all (cut before the first chunk or event): the request may never have been taken; nothing is charged.
    server().reply(cutBefore(readFixture(__dirname, fixture), "data: "));
    const early = await failureOf(collectStream(provider(api).stream(request)));
    expect(early).toBeInstanceOf(ProviderError);
    expect((early as ProviderError).reportedUsage).toBeUndefined();
  });

  it("a chat stream from a server that reports usage on every chunk, cut mid-way, has the last counts on the error", async () => {
    const sse = readFixture(__dirname, "chat-stream-text.sse").replace(/"usage":null/g, '"usage":{"prompt_tokens":2262,"completion_tokens":3,"total_tokens":2265}');
    server().reply(cutBefore(sse, '"finish_reason":"stop"'));
    const error = await failureOf(collectStream(provider("chat").stream(request)));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).reportedUsage).toEqual({ inputTokens: 2262, outputTokens: 3, cachedInputTokens: 0, cacheCreationInputTokens: 0 });
  });

  it("a Responses response.failed event with usage fails with its typed error, the usage on it", async () => {
    server().reply({ sse: failedWithUsage('{"input_tokens":2210,"output_tokens":7,"input_tokens_details":{"cached_tokens":2048},"total_tokens":2217}') });
    const error = await failureOf(collectStream(provider("responses").stream(request)));
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).reportedUsage).toEqual({ inputTokens: 2210, outputTokens: 7, cachedInputTokens: 2048, cacheCreationInputTokens: 0 });
  });

  it("a Responses response.failed event with usage null, or usage that is not counts, fails with its typed error and no reportedUsage", async () => {
    server().reply({ sse: readFixture(__dirname, "responses-stream-failed.sse") }, { sse: failedWithUsage('{"input_tokens":-5,"output_tokens":7}') });
    for (let attempt = 0; attempt < 2; attempt++) {
      const error = await failureOf(collectStream(provider("responses").stream(request)));
      expect(error).toBeInstanceOf(RateLimitError);
      expect((error as RateLimitError).reportedUsage).toBeUndefined();
    }
  });
});

describe("OpenAI chat stream from a server that reports no usage (ignores stream_options.include_usage)", () => {
  /** The fixture stream without its usage chunk: every chunk has usage null, none has counts. */
  const withoutUsage = () => readFixture(__dirname, "chat-stream-text.sse").replace(/^data: \{[^\n]*"choices":\[\],"usage":\{[^\n]*\n\n/m, "");

  /** What the estimate of a request sent as `body` is: the chat parameters (no stream fields), 4 characters a token. */
  function inputEstimateOf(body: Record<string, unknown>): number {
    const { stream: _stream, stream_options: _options, ...chat } = body;
    return Math.ceil(JSON.stringify(chat).length / 4);
  }

  it("the turn carries an estimate, 4 characters a token — the request sent, and the text that came back — not zero", async () => {
    expect(withoutUsage()).not.toMatch(/prompt_tokens/);
    server().reply({ sse: withoutUsage() });
    const events = await collectStream(provider("chat").stream(request));
    const { response } = events.at(-1) as Extract<ModelStreamEvent, { type: "response" }>;
    const text = events.flatMap((event) => (event.type === "text-delta" ? [event.text] : [])).join("");
    expect(text.length).toBeGreaterThan(0);
    expect((response as ModelResponse).usage).toEqual({
      inputTokens: inputEstimateOf(server().requests[0]!.body as Record<string, unknown>),
      outputTokens: Math.ceil(text.length / 4),
      cachedInputTokens: 0,
      cacheCreationInputTokens: 0,
    });
  });

  it("a connection reset after the finish_reason (the usage chunk and [DONE] lost) keeps the whole turn, with the estimate", async () => {
    const sse = readFixture(__dirname, "chat-stream-text.sse");
    // Cut (reset) right after the chunk with the finish_reason, before the usage chunk.
    const finish = sse.indexOf('"finish_reason":"stop"');
    server().reply({ sse, cutAfterBytes: Buffer.byteLength(sse.slice(0, sse.indexOf("\n\n", finish) + 2), "utf8"), abrupt: true });
    const events = await collectStream(provider("chat").stream(request));
    const last = events.at(-1) as Extract<ModelStreamEvent, { type: "response" }>;
    const text = events.flatMap((event) => (event.type === "text-delta" ? [event.text] : [])).join("");
    expect(last.response).toEqual({
      content: [{ type: "text", text }],
      stopReason: "end_turn",
      usage: { inputTokens: inputEstimateOf(server().requests[0]!.body as Record<string, unknown>), outputTokens: Math.ceil(text.length / 4), cachedInputTokens: 0, cacheCreationInputTokens: 0 },
      model: "test-model",
    });
  });

  it("a server that goes silent after the finish_reason keeps the whole turn once idleTimeoutMs passes; a caller's abort there still ends it", async () => {
    const sse = readFixture(__dirname, "chat-stream-text.sse");
    const afterFinish = Buffer.byteLength(sse.slice(0, sse.indexOf("\n\n", sse.indexOf('"finish_reason":"stop"')) + 2), "utf8");
    const silent = () => new OpenAIProvider("test-model", { api: "chat", apiKey: "test-key", baseURL: `${server().url}/v1`, maxRetries: 0, idleTimeoutMs: 300 });
    server().reply({ sse, stallAfterBytes: afterFinish });
    const events = await collectStream(silent().stream(request));
    expect(events.at(-1)).toMatchObject({ type: "response", response: { stopReason: "end_turn", content: [{ type: "text" }] } });
    // The caller aborts while the server is silent after the finish_reason: its reason, not a turn.
    server().reply({ sse, stallAfterBytes: afterFinish });
    const controller = new AbortController();
    const reason = new Error("caller stopped");
    const stream = silent().stream(request, { signal: controller.signal });
    const seen: ModelStreamEvent[] = [];
    const failure = failureOf(
      (async () => {
        for await (const event of stream) {
          seen.push(event);
          if (event.type === "text-delta" && seen.filter((item) => item.type === "text-delta").length === 1) setTimeout(() => controller.abort(reason), 100);
        }
      })(),
    );
    expect(await failure).toBe(reason);
    expect(seen.some((event) => event.type === "response")).toBe(false);
  });

  it("an agent's run under a reach token budget is charged that estimate (before, nothing: maxTokens never stopped such a server)", async () => {
    server().reply({ sse: withoutUsage() });
    const agent = new Agent({ runtime: new Runtime({ provider: provider("chat") }) });
    const { result, used } = await withReachBudget({ depth: 5, tokens: 100_000 }, async () => {
      const run = agent.stream("Weather in Paris?");
      return { result: await run.result, used: currentReach()!.tokens.used };
    });
    expect(result.status).toBe("completed");
    expect(used).toBe(result.usage.inputTokens + result.usage.outputTokens);
    expect(used).toBeGreaterThan(0);
  });
});
