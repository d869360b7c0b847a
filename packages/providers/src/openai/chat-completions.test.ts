import {
  AuthenticationError,
  ContextOverflowError,
  OverloadedError,
  ProviderError,
  RateLimitError,
  type Message,
  type ModelRequest,
} from "@rein/core";
import { collectStream, failureOf, jsonFixture, readFixture, useFixtureServer } from "../__fixtures__/fixture-server";
import { clockTool, firstUserTurn, situationalPrefix, system, weatherTool } from "../__fixtures__/weather-conversation";
import { OpenAIProvider, type OpenAIProviderSettings } from "./openai-provider";

const server = useFixtureServer();

function provider(settings: OpenAIProviderSettings = {}): OpenAIProvider {
  return new OpenAIProvider("test-model", { apiKey: "test-key", baseURL: `${server().url}/v1`, maxRetries: 0, ...settings });
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { system, messages: [firstUserTurn], tools: [weatherTool, clockTool], ...overrides };
}

function fixture(name: string): unknown {
  return jsonFixture(__dirname, name);
}

describe("OpenAIProvider, Chat Completions", () => {
  it("runs a two-step tool loop: tool_calls, then a tool message, then the final text", async () => {
    server().reply({ json: fixture("chat-tool-calls.json") }, { json: fixture("chat-final-text.json") });
    const model = provider();

    const first = await model.complete(request());
    expect(first).toEqual({
      content: [{ type: "tool_use", id: "call_weather_01", name: "get_weather", input: { city: "Paris", days: 3 } }],
      stopReason: "tool_use",
      usage: { inputTokens: 2210, outputTokens: 19, cachedInputTokens: 0, cacheCreationInputTokens: 0 },
      model: "test-model",
    });

    const toolResult: Message = {
      role: "user",
      content: [{ type: "tool_result", toolUseId: "call_weather_01", content: "sunny, 21°C" }],
    };
    const second = await model.complete(
      request({ messages: [firstUserTurn, { role: "assistant", content: first.content }, toolResult] }),
    );
    expect(second.content).toEqual([{ type: "text", text: "Paris will be sunny for the next 3 days, around 21°C." }]);
    expect(second.stopReason).toBe("end_turn");

    const [sent1, sent2] = server().requests;
    expect(sent1.path).toBe("/v1/chat/completions");
    expect(sent1.headers.authorization).toBe("Bearer test-key");
    expect(sent1.body).toEqual({
      model: "test-model",
      messages: [
        { role: "system", content: system },
        {
          role: "user",
          content: [
            { type: "text", text: situationalPrefix },
            { type: "text", text: "What is the weather in Paris for the next 3 days?" },
          ],
        },
      ],
      tools: [
        { type: "function", function: { name: "get_weather", description: weatherTool.description, parameters: weatherTool.parameters } },
        { type: "function", function: { name: "get_time", description: clockTool.description, parameters: clockTool.parameters } },
      ],
    });
    expect(sent2.body.messages).toEqual([
      ...sent1.body.messages,
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_weather_01", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris","days":3}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_weather_01", content: "sunny, 21°C" },
    ]);
  });

  it("reports prompt_tokens_details.cached_tokens as cached input tokens", async () => {
    server().reply({ json: fixture("chat-final-text.json") });
    const response = await provider().complete(request());
    expect(response.usage).toEqual({
      inputTokens: 2262,
      outputTokens: 17,
      cachedInputTokens: 2176,
      cacheCreationInputTokens: 0,
    });
  });

  it("sends tool results before the rest of the user turn, with tool-result images in that user message", async () => {
    server().reply({ json: fixture("chat-final-text.json") });
    await provider().complete(
      request({
        messages: [
          firstUserTurn,
          {
            role: "assistant",
            content: [
              { type: "text", text: "Two lookups." },
              { type: "tool_use", id: "call_a", name: "get_weather", input: { city: "Paris" } },
              { type: "tool_use", id: "call_b", name: "get_time", input: "{oops", inputError: "bad JSON" },
            ],
          },
          {
            role: "user",
            content: [
              { type: "text", text: "Also consider this." },
              {
                type: "tool_result",
                toolUseId: "call_a",
                content: [
                  { type: "text", text: "sunny" },
                  { type: "image", source: { type: "url", url: "https://example.test/map.png" } },
                ],
              },
              { type: "tool_result", toolUseId: "call_b", content: "arguments are not valid JSON", isError: true },
            ],
          },
        ],
      }),
    );
    expect(server().requests[0].body.messages.slice(2)).toEqual([
      {
        role: "assistant",
        content: "Two lookups.",
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
          { id: "call_b", type: "function", function: { name: "get_time", arguments: "{oops" } },
        ],
      },
      { role: "tool", tool_call_id: "call_a", content: "sunny" },
      { role: "tool", tool_call_id: "call_b", content: "arguments are not valid JSON" },
      {
        role: "user",
        content: [
          { type: "text", text: "Also consider this." },
          { type: "image_url", image_url: { url: "https://example.test/map.png" } },
        ],
      },
    ]);
  });

  it("maps tool choices, output limit, temperature and effort", async () => {
    const choices = ["auto", "required", "none", { type: "tool", name: "get_weather" }] as const;
    for (const _ of choices) server().reply({ json: fixture("chat-final-text.json") });
    const model = provider();
    for (const toolChoice of choices) {
      await model.complete(request({ toolChoice, maxOutputTokens: 256, temperature: 0.2, effort: "high" }));
    }
    expect(server().requests.map((sent) => sent.body.tool_choice)).toEqual([
      "auto",
      "required",
      "none",
      { type: "function", function: { name: "get_weather" } },
    ]);
    expect(server().requests[0].body).toMatchObject({ max_completion_tokens: 256, temperature: 0.2, reasoning_effort: "high" });
  });

  it("turns tool-call arguments that are not valid JSON into a ToolUseBlock with inputError instead of throwing", async () => {
    server().reply({ json: fixture("chat-malformed-arguments.json") });
    const response = await provider().complete(request());
    expect(response.content).toEqual([
      {
        type: "tool_use",
        id: "call_bad_01",
        name: "get_weather",
        input: '{"city": "Paris", days: 3',
        inputError: expect.stringMatching(/^arguments are not valid JSON: /),
      },
    ]);
    expect(response.stopReason).toBe("tool_use");
  });

  it("streams text split across many deltas and assembles the turn with usage", async () => {
    server().reply({ sse: readFixture(__dirname, "chat-stream-text.sse") });
    const events = await collectStream(provider().stream(request()));
    const deltas = events.filter((event) => event.type === "text-delta");
    expect(deltas.length).toBe(6);
    expect(deltas.map((event) => event.text).join("")).toBe("Paris will be sunny, around 21°C.");
    expect(events[events.length - 1]).toEqual({
      type: "response",
      response: {
        content: [{ type: "text", text: "Paris will be sunny, around 21°C." }],
        stopReason: "end_turn",
        usage: { inputTokens: 2262, outputTokens: 14, cachedInputTokens: 2176, cacheCreationInputTokens: 0 },
        model: "test-model",
      },
    });
    expect(server().requests[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it("streams two tool calls whose arguments are split mid-token and assembles them by index", async () => {
    server().reply({ sse: readFixture(__dirname, "chat-stream-tool-calls.sse") });
    const events = await collectStream(provider().stream(request()));
    expect(events.slice(0, -1)).toEqual([
      { type: "tool-call-start", id: "call_stream_01", name: "get_weather" },
      { type: "tool-call-delta", id: "call_stream_01", argumentsDelta: '{"ci' },
      { type: "tool-call-delta", id: "call_stream_01", argumentsDelta: 'ty": "Par' },
      { type: "tool-call-delta", id: "call_stream_01", argumentsDelta: 'is", "da' },
      { type: "tool-call-delta", id: "call_stream_01", argumentsDelta: 'ys": 3}' },
      { type: "tool-call-start", id: "call_stream_02", name: "get_time" },
      { type: "tool-call-delta", id: "call_stream_02", argumentsDelta: "{" },
      { type: "tool-call-delta", id: "call_stream_02", argumentsDelta: "}" },
    ]);
    expect(events[events.length - 1]).toEqual({
      type: "response",
      response: {
        content: [
          { type: "tool_use", id: "call_stream_01", name: "get_weather", input: { city: "Paris", days: 3 } },
          { type: "tool_use", id: "call_stream_02", name: "get_time", input: {} },
        ],
        stopReason: "tool_use",
        usage: { inputTokens: 2210, outputTokens: 31, cachedInputTokens: 1024, cacheCreationInputTokens: 0 },
        model: "test-model",
      },
    });
  });

  it("maps 401 to AuthenticationError", async () => {
    server().reply({ status: 401, json: fixture("chat-error-401.json") });
    const error = await failureOf(provider().complete(request()));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ provider: "openai", status: 401 });
    expect((error as Error).message).toContain("Incorrect API key provided");
  });

  it("maps 429 to RateLimitError with the retry-after seconds", async () => {
    server().reply({ status: 429, headers: { "retry-after": "4" }, json: fixture("chat-error-429.json") });
    const error = await failureOf(provider().complete(request()));
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterSeconds).toBe(4);
  });

  it("maps 503 to OverloadedError", async () => {
    server().reply({ status: 503, json: fixture("chat-error-503.json") });
    const error = await failureOf(provider().complete(request()));
    expect(error).toBeInstanceOf(OverloadedError);
    expect((error as OverloadedError).status).toBe(503);
  });

  it("maps 400 context_length_exceeded to ContextOverflowError", async () => {
    server().reply({ status: 400, json: fixture("chat-error-400-context-length.json") });
    const error = await failureOf(provider().complete(request()));
    expect(error).toBeInstanceOf(ContextOverflowError);
    expect((error as ContextOverflowError).body).toMatchObject({ code: "context_length_exceeded" });
  });

  it("maps a 500 to a plain ProviderError keeping status and body", async () => {
    server().reply({ status: 500, json: fixture("chat-error-500.json") });
    const error = await failureOf(provider().complete(request()));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).not.toBeInstanceOf(OverloadedError);
    expect(error).toMatchObject({ status: 500, body: { type: "server_error" } });
  });

  it("maps an error status on a streamed request to its typed error", async () => {
    server().reply({ status: 429, headers: { "retry-after-ms": "1500" }, json: fixture("chat-error-429.json") });
    const error = await failureOf(collectStream(provider().stream(request())));
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterSeconds).toBe(1.5);
  });

  it("retries a 500 up to maxRetries, honouring retry-after-ms", async () => {
    server().reply(
      { status: 500, headers: { "retry-after-ms": "1" }, json: fixture("chat-error-500.json") },
      { json: fixture("chat-final-text.json") },
    );
    const response = await provider({ maxRetries: 1 }).complete(request());
    expect(response.stopReason).toBe("end_turn");
    expect(server().requests).toHaveLength(2);
  });
});
