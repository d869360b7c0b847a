import type { ModelRequest } from "@rein/core";
import { collectStream, failureOf, jsonFixture, readFixture, useFixtureServer } from "../__fixtures__/fixture-server";
import { firstUserTurn, system, weatherReport, weatherReportFormat, weatherTool } from "../__fixtures__/weather-conversation";
import { AnthropicProvider } from "./anthropic-provider";
import { formatToolDescription } from "./anthropic-request";

const server = useFixtureServer();

function provider(): AnthropicProvider {
  return new AnthropicProvider("test-model", { apiKey: "test-key", baseURL: server().url, maxRetries: 0 });
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { system, messages: [firstUserTurn], tools: [], responseFormat: weatherReportFormat, ...overrides };
}

const formatTool = {
  name: "weather_report",
  description: formatToolDescription(weatherReportFormat),
  input_schema: weatherReportFormat.schema,
};

describe("AnthropicProvider, structured output (responseFormat)", () => {
  it("sends the format as a forced tool when no other tool is offered, and returns its input as the answer text", async () => {
    server().reply({ json: jsonFixture(__dirname, "messages-response-format.json") });
    const response = await provider().complete(request());

    const sent = server().requests[0].body;
    expect(sent.tools).toEqual([formatTool]);
    expect(sent.tool_choice).toEqual({ type: "tool", name: "weather_report" });
    expect(response).toEqual({
      content: [{ type: "text", text: JSON.stringify(weatherReport) }],
      stopReason: "end_turn",
      usage: { inputTokens: 1840, outputTokens: 32, cachedInputTokens: 1800, cacheCreationInputTokens: 0 },
      model: "test-model",
    });
    expect(JSON.parse((response.content[0] as { text: string }).text)).toEqual(weatherReport);
  });

  it("offers the format tool last beside the request's tools, forcing it only when toolChoice is none or names it", async () => {
    for (let index = 0; index < 4; index++) server().reply({ json: jsonFixture(__dirname, "messages-response-format.json") });
    const model = provider();
    await model.complete(request({ tools: [weatherTool] }));
    await model.complete(request({ tools: [weatherTool], toolChoice: "required" }));
    await model.complete(request({ tools: [weatherTool], toolChoice: "none" }));
    await model.complete(request({ tools: [weatherTool], toolChoice: { type: "tool", name: "weather_report" } }));

    const [auto, required, none, named] = server().requests.map((sent) => sent.body);
    expect(auto.tools.map((tool: { name: string }) => tool.name)).toEqual(["get_weather", "weather_report"]);
    expect(auto.tool_choice).toBeUndefined();
    expect(required.tool_choice).toEqual({ type: "any" });
    expect(none.tool_choice).toEqual({ type: "tool", name: "weather_report" });
    expect(named.tool_choice).toEqual({ type: "tool", name: "weather_report" });
  });

  it("keeps the model's other tool calls, drops its prose, and keeps stopReason tool_use when a call remains", async () => {
    const body = jsonFixture(__dirname, "messages-response-format.json") as { content: unknown[] };
    body.content = [
      { type: "text", text: "Here is the report:" },
      { type: "tool_use", id: "toolu_other", name: "get_weather", input: { city: "Lyon" } },
      ...body.content,
    ];
    server().reply({ json: body });
    const response = await provider().complete(request({ tools: [weatherTool] }));
    expect(response.content).toEqual([
      { type: "tool_use", id: "toolu_other", name: "get_weather", input: { city: "Lyon" } },
      { type: "text", text: JSON.stringify(weatherReport) },
    ]);
    expect(response.stopReason).toBe("tool_use");
  });

  it("streams the format tool's input as text deltas that add up to the answer text", async () => {
    server().reply({ sse: readFixture(__dirname, "messages-stream-response-format.sse") });
    const events = await collectStream(provider().stream(request()));
    expect(events.some((event) => event.type === "tool-call-start" || event.type === "tool-call-delta")).toBe(false);
    const text = events.flatMap((event) => (event.type === "text-delta" ? [event.text] : [])).join("");
    expect(JSON.parse(text)).toEqual(weatherReport);
    expect(events[events.length - 1]).toEqual({
      type: "response",
      response: {
        content: [{ type: "text", text }],
        stopReason: "end_turn",
        usage: { inputTokens: 1840, outputTokens: 32, cachedInputTokens: 1800, cacheCreationInputTokens: 0 },
        model: "test-model",
      },
    });
    expect(server().requests[0].body.tool_choice).toEqual({ type: "tool", name: "weather_report" });
  });

  it("rejects a response format named like one of the request's tools", async () => {
    const error = await failureOf(provider().complete(request({ tools: [{ ...weatherTool, name: "weather_report" }] })));
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toContain('responseFormat.name "weather_report" is also the name of a tool');
    expect(server().requests).toHaveLength(0);
  });
});
