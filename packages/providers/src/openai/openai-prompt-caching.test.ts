import type { ModelRequest } from "@rein/core";
import { collectStream, jsonFixture, readFixture, useFixtureServer } from "../__fixtures__/fixture-server";
import { firstUserTurn, system } from "../__fixtures__/weather-conversation";
import { OpenAIProvider, type OpenAIApi } from "./openai-provider";

const server = useFixtureServer();

function provider(api: OpenAIApi): OpenAIProvider {
  return new OpenAIProvider("test-model", { api, apiKey: "test-key", baseURL: `${server().url}/v1`, maxRetries: 0 });
}

const request: ModelRequest = { system, messages: [firstUserTurn], tools: [], cacheKey: "session-42" };
const cachedUsage = { inputTokens: expect.any(Number), outputTokens: expect.any(Number), cachedInputTokens: 2176, cacheCreationInputTokens: 0 };

describe.each([
  { api: "chat" as const, final: "chat-final-text.json", stream: "chat-stream-text.sse" },
  { api: "responses" as const, final: "responses-final-text.json", stream: "responses-stream-text.sse" },
])("OpenAIProvider ($api), prompt caching", ({ api, final, stream }) => {
  it("sends the request's cacheKey as prompt_cache_key, streamed or not, and nothing without one", async () => {
    server().reply({ json: jsonFixture(__dirname, final) }, { sse: readFixture(__dirname, stream) }, { json: jsonFixture(__dirname, final) });
    const model = provider(api);
    const response = await model.complete(request);
    const events = await collectStream(model.stream(request));
    await model.complete({ ...request, cacheKey: undefined });

    const [sent, streamed, unkeyed] = server().requests.map((recorded) => recorded.body);
    expect(sent.prompt_cache_key).toBe("session-42");
    expect(streamed.prompt_cache_key).toBe("session-42");
    expect(unkeyed).not.toHaveProperty("prompt_cache_key");
    // What the API says was read from its cache comes back as cachedInputTokens, streamed or not.
    expect(response.usage).toEqual(cachedUsage);
    const last = events[events.length - 1];
    expect(last.type === "response" && last.response.usage).toEqual(cachedUsage);
  });
});
