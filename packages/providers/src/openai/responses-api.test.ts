import { ContextOverflowError, ProviderError, RateLimitError, type Message, type ModelRequest } from "@rein/core";
import { collectStream, failureOf, jsonFixture, readFixture, useFixtureServer } from "../__fixtures__/fixture-server";
import { firstUserTurn, situationalPrefix, system, weatherTool } from "../__fixtures__/weather-conversation";
import { OpenAIProvider, type OpenAIProviderSettings } from "./openai-provider";

const server = useFixtureServer();

function provider(settings: OpenAIProviderSettings = {}): OpenAIProvider {
  return new OpenAIProvider("test-model", {
    api: "responses",
    apiKey: "test-key",
    baseURL: `${server().url}/v1`,
    maxRetries: 0,
    ...settings,
  });
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { system, messages: [firstUserTurn], tools: [weatherTool], ...overrides };
}

function fixture(name: string): unknown {
  return jsonFixture(__dirname, name);
}

describe("OpenAIProvider, Responses API", () => {
  it("runs a two-step tool loop: function_call, then function_call_output, then the final text", async () => {
    server().reply({ json: fixture("responses-function-call.json") }, { json: fixture("responses-final-text.json") });
    const model = provider();

    const first = await model.complete(request());
    expect(first).toEqual({
      content: [
        { type: "text", text: "I'll look up the weather in Paris." },
        { type: "tool_use", id: "call_resp_01", name: "get_weather", input: { city: "Paris", days: 3 } },
      ],
      stopReason: "tool_use",
      usage: { inputTokens: 2210, outputTokens: 25, cachedInputTokens: 0, cacheCreationInputTokens: 0 },
      model: "test-model",
    });

    const toolResult: Message = {
      role: "user",
      content: [{ type: "tool_result", toolUseId: "call_resp_01", content: "sunny, 21°C" }],
    };
    const second = await model.complete(
      request({ messages: [firstUserTurn, { role: "assistant", content: first.content }, toolResult] }),
    );
    expect(second.content).toEqual([{ type: "text", text: "Paris will be sunny for the next 3 days, around 21°C." }]);
    expect(second.stopReason).toBe("end_turn");

    const [sent1, sent2] = server().requests;
    expect(sent1.path).toBe("/v1/responses");
    expect(sent1.body).toEqual({
      model: "test-model",
      instructions: system,
      store: false,
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: situationalPrefix },
            { type: "input_text", text: "What is the weather in Paris for the next 3 days?" },
          ],
        },
      ],
      tools: [
        {
          type: "function",
          name: "get_weather",
          description: weatherTool.description,
          parameters: weatherTool.parameters,
          strict: false,
        },
      ],
    });
    expect(sent2.body.input).toEqual([
      sent1.body.input[0],
      { role: "assistant", content: "I'll look up the weather in Paris." },
      { type: "function_call", call_id: "call_resp_01", name: "get_weather", arguments: '{"city":"Paris","days":3}' },
      { type: "function_call_output", call_id: "call_resp_01", output: "sunny, 21°C" },
    ]);
  });

  it("reports input_tokens_details.cached_tokens as cached input tokens", async () => {
    server().reply({ json: fixture("responses-final-text.json") });
    const response = await provider().complete(request());
    expect(response.usage).toEqual({ inputTokens: 2270, outputTokens: 17, cachedInputTokens: 2176, cacheCreationInputTokens: 0 });
  });

  it("maps tool choices, output limit and effort, and an incomplete response to max_tokens", async () => {
    server().reply({ json: fixture("responses-incomplete.json") }, { json: fixture("responses-final-text.json") });
    const truncated = await provider().complete(
      request({ toolChoice: { type: "tool", name: "get_weather" }, maxOutputTokens: 5, effort: "low" }),
    );
    await provider().complete(request({ toolChoice: "required" }));
    expect(truncated.stopReason).toBe("max_tokens");
    expect(server().requests[0].body).toMatchObject({
      tool_choice: { type: "function", name: "get_weather" },
      max_output_tokens: 5,
      reasoning: { effort: "low" },
    });
    expect(server().requests[1].body.tool_choice).toBe("required");
  });

  it("turns function-call arguments that are not valid JSON into a ToolUseBlock with inputError instead of throwing", async () => {
    server().reply({ json: fixture("responses-malformed-arguments.json") });
    const response = await provider().complete(request());
    expect(response.content).toEqual([
      {
        type: "tool_use",
        id: "call_resp_bad",
        name: "get_weather",
        input: '{"city": "Paris", days: 3',
        inputError: expect.stringMatching(/^arguments are not valid JSON: /),
      },
    ]);
  });

  it("streams text split across many deltas and assembles the turn with usage", async () => {
    server().reply({ sse: readFixture(__dirname, "responses-stream-text.sse") });
    const events = await collectStream(provider().stream(request()));
    const deltas = events.filter((event) => event.type === "text-delta");
    expect(deltas.length).toBe(6);
    expect(deltas.map((event) => event.text).join("")).toBe("Paris will be sunny, around 21°C.");
    expect(events[events.length - 1]).toEqual({
      type: "response",
      response: {
        content: [{ type: "text", text: "Paris will be sunny, around 21°C." }],
        stopReason: "end_turn",
        usage: { inputTokens: 2270, outputTokens: 14, cachedInputTokens: 2176, cacheCreationInputTokens: 0 },
        model: "test-model",
      },
    });
    expect(server().requests[0].body.stream).toBe(true);
  });

  it("streams a function call whose arguments are split mid-token, keyed by call_id", async () => {
    server().reply({ sse: readFixture(__dirname, "responses-stream-function-call.sse") });
    const events = await collectStream(provider().stream(request()));
    expect(events.slice(0, -1)).toEqual([
      { type: "tool-call-start", id: "call_resp_stream", name: "get_weather" },
      { type: "tool-call-delta", id: "call_resp_stream", argumentsDelta: '{"ci' },
      { type: "tool-call-delta", id: "call_resp_stream", argumentsDelta: 'ty": "Par' },
      { type: "tool-call-delta", id: "call_resp_stream", argumentsDelta: 'is", "da' },
      { type: "tool-call-delta", id: "call_resp_stream", argumentsDelta: 'ys": 3}' },
    ]);
    expect(events[events.length - 1]).toEqual({
      type: "response",
      response: {
        content: [{ type: "tool_use", id: "call_resp_stream", name: "get_weather", input: { city: "Paris", days: 3 } }],
        stopReason: "tool_use",
        usage: { inputTokens: 2210, outputTokens: 31, cachedInputTokens: 1024, cacheCreationInputTokens: 0 },
        model: "test-model",
      },
    });
  });

  it("maps a response.failed event inside a stream to its typed error", async () => {
    server().reply({ sse: readFixture(__dirname, "responses-stream-failed.sse") });
    const error = await failureOf(collectStream(provider().stream(request())));
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as Error).message).toContain("Rate limit reached");
  });

  it("a response.failed event with no response in it is a ProviderError saying the response failed, not an internal TypeError", async () => {
    server().reply({ sse: 'event: response.failed\ndata: {"type":"response.failed","sequence_number":1}\n\n' });
    const error = await failureOf(collectStream(provider().stream(request())));
    expect(ProviderError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain("the response failed without an error message");
    expect((error as Error).message).not.toContain("TypeError");
  });

  it("maps 400 context_length_exceeded to ContextOverflowError", async () => {
    server().reply({ status: 400, json: fixture("responses-error-400-context-length.json") });
    const error = await failureOf(provider().complete(request()));
    expect(error).toBeInstanceOf(ContextOverflowError);
    expect(error).toMatchObject({ status: 400, provider: "openai" });
  });
});
