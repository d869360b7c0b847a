import Anthropic from "@anthropic-ai/sdk";
import {
  AuthenticationError,
  ContextOverflowError,
  OverloadedError,
  ProviderError,
  RateLimitError,
  type Message,
  type ModelRequest,
  type ModelStreamEvent,
} from "@rein/core";
import { collectStream, failureOf, jsonFixture, readFixture, useFixtureServer } from "../__fixtures__/fixture-server";
import { clockTool, firstUserTurn, situationalPrefix, system, weatherTool } from "../__fixtures__/weather-conversation";
import { AnthropicProvider, type AnthropicProviderSettings } from "./anthropic-provider";

const server = useFixtureServer();

function provider(settings: AnthropicProviderSettings = {}): AnthropicProvider {
  return new AnthropicProvider("test-model", { apiKey: "test-key", baseURL: server().url, maxRetries: 0, ...settings });
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { system, messages: [firstUserTurn], tools: [weatherTool, clockTool], ...overrides };
}

function fixture(name: string): unknown {
  return jsonFixture(__dirname, name);
}

describe("AnthropicProvider", () => {
  it("runs a two-step tool loop: tool_use, then tool_result, then the final text", async () => {
    server().reply({ json: fixture("messages-tool-use.json") }, { json: fixture("messages-final-text.json") });
    const model = provider();

    const first = await model.complete(request());
    expect(first.stopReason).toBe("tool_use");
    expect(first.content).toEqual([
      { type: "text", text: "I'll look up the weather in Paris." },
      { type: "tool_use", id: "toolu_01A09q90qw90lq917835lq9", name: "get_weather", input: { city: "Paris", days: 3 } },
    ]);

    const toolResult: Message = {
      role: "user",
      content: [{ type: "tool_result", toolUseId: "toolu_01A09q90qw90lq917835lq9", content: "sunny, 21°C" }],
    };
    const second = await model.complete(
      request({ messages: [firstUserTurn, { role: "assistant", content: first.content }, toolResult] }),
    );
    expect(second).toEqual({
      content: [{ type: "text", text: "Paris will be sunny for the next 3 days, around 21°C." }],
      stopReason: "end_turn",
      usage: { inputTokens: 1896, outputTokens: 18, cachedInputTokens: 1800, cacheCreationInputTokens: 0 },
      model: "test-model",
    });

    const [sent1, sent2] = server().requests;
    expect(sent1.path).toBe("/v1/messages");
    expect(sent1.headers.authorization).toBe("Bearer test-key");
    expect(sent1.body).toEqual({
      model: "test-model",
      max_tokens: 4096,
      system: [{ type: "text", text: system, cache_control: { type: "ephemeral" } }],
      tools: [
        { name: "get_weather", description: weatherTool.description, input_schema: weatherTool.parameters },
        { name: "get_time", description: clockTool.description, input_schema: clockTool.parameters },
      ],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: situationalPrefix },
            // The rolling breakpoint: the end of the last user turn.
            { type: "text", text: "What is the weather in Paris for the next 3 days?", cache_control: { type: "ephemeral" } },
          ],
        },
      ],
    });
    expect(sent2.body.system).toEqual(sent1.body.system);
    expect(sent2.body.tools).toEqual(sent1.body.tools);
    expect(sent2.body.messages).toEqual([
      // Still marked: the request before wrote its cache there, this one reads it.
      sent1.body.messages[0],
      {
        role: "assistant",
        content: [
          { type: "text", text: "I'll look up the weather in Paris." },
          { type: "tool_use", id: "toolu_01A09q90qw90lq917835lq9", name: "get_weather", input: { city: "Paris", days: 3 } },
        ],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_01A09q90qw90lq917835lq9",
            content: "sunny, 21°C",
            cache_control: { type: "ephemeral" },
          },
        ],
      },
    ]);
  });

  it("reports usage with cache creation and cache reads, counting every input token", async () => {
    server().reply({ json: fixture("messages-tool-use.json") });
    const response = await provider().complete(request());
    expect(response.usage).toEqual({
      inputTokens: 1824,
      outputTokens: 61,
      cachedInputTokens: 0,
      cacheCreationInputTokens: 1800,
    });
  });

  it("maps tool_result errors and images, and echoes a malformed earlier call with empty input", async () => {
    server().reply({ json: fixture("messages-final-text.json") });
    await provider().complete(
      request({
        messages: [
          firstUserTurn,
          {
            role: "assistant",
            content: [{ type: "tool_use", id: "toolu_bad", name: "get_weather", input: "{city:", inputError: "bad JSON" }],
          },
          {
            role: "user",
            content: [
              {
                type: "tool_result",
                toolUseId: "toolu_bad",
                isError: true,
                content: [
                  { type: "text", text: "arguments are not valid JSON" },
                  { type: "image", source: { type: "base64", mediaType: "image/png", data: "iVBORw0KGgo=" } },
                ],
              },
            ],
          },
        ],
      }),
    );
    const messages = server().requests[0].body.messages;
    expect(messages[1].content[0]).toEqual({ type: "tool_use", id: "toolu_bad", name: "get_weather", input: {} });
    expect(messages[2].content[0]).toEqual({
      type: "tool_result",
      tool_use_id: "toolu_bad",
      is_error: true,
      cache_control: { type: "ephemeral" },
      content: [
        { type: "text", text: "arguments are not valid JSON" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
      ],
    });
  });

  it("maps tool choices to auto, any, none and a named tool", async () => {
    const choices = ["auto", "required", "none", { type: "tool", name: "get_weather" }] as const;
    for (const _ of choices) server().reply({ json: fixture("messages-final-text.json") });
    const model = provider();
    for (const toolChoice of choices) await model.complete(request({ toolChoice }));
    expect(server().requests.map((sent) => sent.body.tool_choice)).toEqual([
      { type: "auto" },
      { type: "any" },
      { type: "none" },
      { type: "tool", name: "get_weather" },
    ]);
  });

  it("puts the cache breakpoint on the last tool when there is no system text, and none with promptCaching false", async () => {
    server().reply({ json: fixture("messages-final-text.json") }, { json: fixture("messages-final-text.json") });
    await provider().complete(request({ system: "" }));
    await provider({ promptCaching: false }).complete(request());
    const [withoutSystem, uncached] = server().requests;
    expect(withoutSystem.body.system).toBeUndefined();
    expect(withoutSystem.body.tools[0].cache_control).toBeUndefined();
    expect(withoutSystem.body.tools[1].cache_control).toEqual({ type: "ephemeral" });
    expect(JSON.stringify(uncached.body)).not.toContain("cache_control");
  });

  it("sends the request's model, output limit and effort, and maps max_tokens as the stop reason", async () => {
    server().reply({ json: fixture("messages-max-tokens.json") });
    const response = await provider().complete(
      request({ model: "other-test-model", maxOutputTokens: 5, effort: "low" }),
    );
    expect(server().requests[0].body).toMatchObject({
      model: "other-test-model",
      max_tokens: 5,
      output_config: { effort: "low" },
    });
    expect(response.stopReason).toBe("max_tokens");
    expect(response.usage).toEqual({ inputTokens: 12, outputTokens: 5, cachedInputTokens: 0, cacheCreationInputTokens: 0 });
  });

  it("streams text split across many deltas and assembles the turn", async () => {
    server().reply({ sse: readFixture(__dirname, "messages-stream-text.sse") });
    const events = await collectStream(provider().stream(request()));

    const deltas = events.filter((event) => event.type === "text-delta");
    expect(deltas.length).toBe(6);
    expect(deltas.map((event) => event.text).join("")).toBe("Paris will be sunny, around 21°C.");
    expect(events[events.length - 1]).toEqual({
      type: "response",
      response: {
        content: [{ type: "text", text: "Paris will be sunny, around 21°C." }],
        stopReason: "end_turn",
        usage: { inputTokens: 1830, outputTokens: 14, cachedInputTokens: 1800, cacheCreationInputTokens: 0 },
        model: "test-model",
      },
    });
    expect(server().requests[0].body.stream).toBe(true);
    expect(server().requests[0].body.system[0].cache_control).toEqual({ type: "ephemeral" });
  });

  it("streams a tool call whose input JSON is split mid-token and parses the assembled input", async () => {
    server().reply({ sse: readFixture(__dirname, "messages-stream-tool-use.sse") });
    const events = await collectStream(provider().stream(request()));

    expect(events.filter((event) => event.type !== "text-delta" && event.type !== "response")).toEqual([
      { type: "tool-call-start", id: "toolu_01StreamCall", name: "get_weather" },
      { type: "tool-call-delta", id: "toolu_01StreamCall", argumentsDelta: "" },
      { type: "tool-call-delta", id: "toolu_01StreamCall", argumentsDelta: '{"ci' },
      { type: "tool-call-delta", id: "toolu_01StreamCall", argumentsDelta: 'ty": "Par' },
      { type: "tool-call-delta", id: "toolu_01StreamCall", argumentsDelta: 'is", "da' },
      { type: "tool-call-delta", id: "toolu_01StreamCall", argumentsDelta: 'ys": 3}' },
    ]);
    const last = events[events.length - 1];
    expect(last).toEqual({
      type: "response",
      response: {
        content: [
          { type: "text", text: "Checking the weather." },
          { type: "tool_use", id: "toolu_01StreamCall", name: "get_weather", input: { city: "Paris", days: 3 } },
        ],
        stopReason: "tool_use",
        usage: { inputTokens: 1824, outputTokens: 47, cachedInputTokens: 0, cacheCreationInputTokens: 1800 },
        model: "test-model",
      },
    });
  });

  it("turns streamed tool input that is not valid JSON into a ToolUseBlock with inputError instead of throwing", async () => {
    server().reply({ sse: readFixture(__dirname, "messages-stream-malformed-tool-input.sse") });
    const events = await collectStream(provider().stream(request()));
    const last = events[events.length - 1];
    if (last.type !== "response") throw new Error("the stream must end with its response");
    expect(last.response.stopReason).toBe("max_tokens");
    expect(last.response.content).toEqual([
      {
        type: "tool_use",
        id: "toolu_01Truncated",
        name: "get_weather",
        input: '{"city": "Pa',
        inputError: expect.stringMatching(/^arguments are not valid JSON: /),
      },
    ]);
  });

  it("maps an error event inside a stream to OverloadedError", async () => {
    server().reply({ sse: readFixture(__dirname, "messages-stream-overloaded.sse") });
    const error = await failureOf(collectStream(provider().stream(request())));
    expect(error).toBeInstanceOf(OverloadedError);
    expect((error as OverloadedError).provider).toBe("anthropic");
  });

  it("maps 401 to AuthenticationError", async () => {
    server().reply({ status: 401, json: fixture("error-401.json") });
    const error = await failureOf(provider().complete(request()));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, provider: "anthropic", body: fixture("error-401.json") });
    expect((error as Error).message).toContain("invalid x-api-key");
  });

  it("maps 429 to RateLimitError with the retry-after seconds", async () => {
    server().reply({ status: 429, headers: { "retry-after": "20" }, json: fixture("error-429.json") });
    const error = await failureOf(provider().complete(request()));
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterSeconds).toBe(20);
    expect((error as Error).message).toContain("retry after 20s");
  });

  it("maps 529 overloaded_error to OverloadedError", async () => {
    server().reply({ status: 529, json: fixture("error-529.json") });
    const error = await failureOf(provider().complete(request()));
    expect(error).toBeInstanceOf(OverloadedError);
    expect((error as OverloadedError).status).toBe(529);
  });

  it("maps 400 'prompt is too long' to ContextOverflowError", async () => {
    server().reply({ status: 400, json: fixture("error-400-prompt-too-long.json") });
    const error = await failureOf(provider().complete(request()));
    expect(error).toBeInstanceOf(ContextOverflowError);
    expect((error as Error).message).toContain("prompt is too long: 212843 tokens > 200000 maximum");
  });

  it("maps any other 400 to a plain ProviderError keeping status and body", async () => {
    server().reply({ status: 400, json: fixture("error-400-invalid-request.json") });
    const error = await failureOf(provider().complete(request()));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).not.toBeInstanceOf(ContextOverflowError);
    expect(error).toMatchObject({ status: 400, body: fixture("error-400-invalid-request.json") });
  });

  it("retries up to maxRetries, honouring retry-after-ms", async () => {
    server().reply(
      { status: 529, headers: { "retry-after-ms": "1" }, json: fixture("error-529.json") },
      { json: fixture("messages-final-text.json") },
    );
    const response = await provider({ maxRetries: 1 }).complete(request());
    expect(response.stopReason).toBe("end_turn");
    expect(server().requests).toHaveLength(2);
  });

  it("rethrows the caller's abort reason", async () => {
    server().reply({ json: fixture("messages-final-text.json") });
    const controller = new AbortController();
    controller.abort(new Error("stopped by the caller"));
    await expect(provider().complete(request(), { signal: controller.signal })).rejects.toThrow("stopped by the caller");
  });

  it("ends an aborted stream with the caller's reason, never with a partial response", async () => {
    server().reply({ sse: readFixture(__dirname, "messages-stream-text.sse") });
    const controller = new AbortController();
    const seen: ModelStreamEvent[] = [];
    const consume = async () => {
      for await (const event of provider().stream(request(), { signal: controller.signal })) {
        seen.push(event);
        if (event.type === "text-delta") controller.abort(new Error("stopped mid-stream"));
      }
    };
    await expect(consume()).rejects.toThrow("stopped mid-stream");
    expect(seen.some((event) => event.type === "response")).toBe(false);
  });

  it("rejects a client together with apiKey, and uses a given client", async () => {
    const client = new Anthropic({ apiKey: "test-key", baseURL: server().url, maxRetries: 0 });
    expect(() => new AnthropicProvider("test-model", { client, apiKey: "test-key" })).toThrow(
      "Cannot provide both apiKey and client",
    );
    server().reply({ json: fixture("messages-final-text.json") });
    const model = new AnthropicProvider("test-model", { client });
    expect(model.client).toBe(client);
    expect((await model.complete(request())).stopReason).toBe("end_turn");
    expect(model).toMatchObject({ specificationVersion: "rein-model-v1", providerId: "anthropic", modelId: "test-model" });
  });
});
