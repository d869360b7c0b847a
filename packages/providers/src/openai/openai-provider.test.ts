import OpenAI from "openai";
import { jsonFixture, useFixtureServer } from "../__fixtures__/fixture-server";
import { OpenAIProvider } from "./openai-provider";

const savedKey = process.env.OPENAI_API_KEY;
const server = useFixtureServer();
beforeEach(() => {
  delete process.env.OPENAI_API_KEY;
});
afterEach(() => {
  if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = savedKey;
});

const hello = { system: "", messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "Hi" }] }], tools: [] };

describe("OpenAIProvider", () => {
  it("implements rein-model-v1 and defaults to Chat Completions", () => {
    expect(new OpenAIProvider("test-model", { apiKey: "test-key" })).toMatchObject({
      specificationVersion: "rein-model-v1",
      providerId: "openai",
      modelId: "test-model",
      api: "chat",
    });
  });

  it("rejects a client together with apiKey or baseURL, and an unknown api", () => {
    const client = new OpenAI({ apiKey: "test-key" });
    expect(() => new OpenAIProvider("test-model", { client, apiKey: "test-key" })).toThrow(
      "Cannot provide both apiKey and client",
    );
    expect(() => new OpenAIProvider("test-model", { client, baseURL: "http://127.0.0.1:1/v1" })).toThrow(
      "Cannot provide both baseURL and client",
    );
    expect(() => new OpenAIProvider("test-model", { api: "assistants" as "chat" })).toThrow(
      'api must be "chat" or "responses", got "assistants"',
    );
  });

  it("talks to an OpenAI-compatible server by baseURL without an API key", async () => {
    server().reply({ json: jsonFixture(__dirname, "chat-final-text.json") });
    const model = new OpenAIProvider("local-model", { baseURL: `${server().url}/v1`, maxRetries: 0 });
    const response = await model.complete(hello);
    expect(response.stopReason).toBe("end_turn");
    expect(server().requests[0].path).toBe("/v1/chat/completions");
    expect(server().requests[0].body.model).toBe("local-model");
    expect(server().requests[0].body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Hi" }] }]);
  });

  it("uses a given client as it is", async () => {
    server().reply({ json: jsonFixture(__dirname, "responses-final-text.json") });
    const client = new OpenAI({ apiKey: "test-key", baseURL: `${server().url}/v1`, maxRetries: 0 });
    const model = new OpenAIProvider("test-model", { client, api: "responses" });
    expect(model.client).toBe(client);
    expect((await model.complete(hello)).stopReason).toBe("end_turn");
    expect(server().requests[0].path).toBe("/v1/responses");
  });
});
