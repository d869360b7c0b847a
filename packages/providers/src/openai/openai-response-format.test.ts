import type { ModelRequest } from "@rein/core";
import { collectStream, jsonFixture, readFixture, useFixtureServer } from "../__fixtures__/fixture-server";
import { firstUserTurn, system, weatherReport, weatherReportFormat, weatherTool } from "../__fixtures__/weather-conversation";
import { OpenAIProvider, type OpenAIApi } from "./openai-provider";

const server = useFixtureServer();

function provider(api: OpenAIApi): OpenAIProvider {
  return new OpenAIProvider("test-model", { api, apiKey: "test-key", baseURL: `${server().url}/v1`, maxRetries: 0 });
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { system, messages: [firstUserTurn], tools: [], responseFormat: weatherReportFormat, ...overrides };
}

describe("OpenAIProvider, structured output (responseFormat)", () => {
  it("Chat Completions: sends response_format json_schema (strict unless told otherwise) and returns the JSON as text", async () => {
    server().reply({ json: jsonFixture(__dirname, "chat-response-format.json") }, { sse: readFixture(__dirname, "chat-stream-text.sse") });
    const model = provider("chat");
    const response = await model.complete(request());
    await collectStream(model.stream(request({ responseFormat: { ...weatherReportFormat, strict: false } })));

    const [sent, streamed] = server().requests.map((recorded) => recorded.body);
    expect(sent.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "weather_report", schema: weatherReportFormat.schema, strict: true },
    });
    expect(streamed.response_format.json_schema.strict).toBe(false);
    expect(streamed.stream).toBe(true);
    expect(response.content).toEqual([{ type: "text", text: JSON.stringify(weatherReport) }]);
    expect(response.stopReason).toBe("end_turn");
  });

  it("Responses API: sends text.format json_schema (strict unless told otherwise) and returns the JSON as text", async () => {
    server().reply({ json: jsonFixture(__dirname, "responses-response-format.json") }, { sse: readFixture(__dirname, "responses-stream-text.sse") });
    const model = provider("responses");
    const response = await model.complete(request());
    await collectStream(model.stream(request({ responseFormat: { ...weatherReportFormat, strict: false } })));

    const [sent, streamed] = server().requests.map((recorded) => recorded.body);
    expect(sent.text).toEqual({
      format: { type: "json_schema", name: "weather_report", schema: weatherReportFormat.schema, strict: true },
    });
    expect(streamed.text.format.strict).toBe(false);
    expect(streamed.stream).toBe(true);
    expect(response.content).toEqual([{ type: "text", text: JSON.stringify(weatherReport) }]);
    expect(JSON.parse((response.content[0] as { text: string }).text)).toEqual(weatherReport);
  });

  it("turns a toolChoice naming the format into tool_choice none (nothing without tools), since the format is no tool here", async () => {
    for (const api of ["chat", "responses"] as const) {
      const final = api === "chat" ? "chat-response-format.json" : "responses-response-format.json";
      server().reply({ json: jsonFixture(__dirname, final) }, { json: jsonFixture(__dirname, final) });
      const answerNow = { type: "tool", name: "weather_report" } as const;
      await provider(api).complete(request({ tools: [weatherTool], toolChoice: answerNow }));
      await provider(api).complete(request({ toolChoice: answerNow }));
    }
    const choices = server().requests.map((recorded) => recorded.body.tool_choice);
    expect(choices).toEqual(["none", undefined, "none", undefined]);
  });

  it("sends no format when the request asks for none", async () => {
    server().reply({ json: jsonFixture(__dirname, "chat-final-text.json") }, { json: jsonFixture(__dirname, "responses-final-text.json") });
    await provider("chat").complete(request({ responseFormat: undefined }));
    await provider("responses").complete(request({ responseFormat: undefined }));
    const [chat, responses] = server().requests.map((recorded) => recorded.body);
    expect(chat.response_format).toBeUndefined();
    expect(responses.text).toBeUndefined();
  });
});
