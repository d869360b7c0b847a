import type { Message, ResponseFormat, ToolSpec } from "@rein/core";

/** The conversation every adapter test replays: a weather question answered through one tool call. */
export const weatherTool: ToolSpec = {
  name: "get_weather",
  description: "Weather forecast for a city.",
  parameters: { type: "object", properties: { city: { type: "string" }, days: { type: "integer" } }, required: ["city"] },
};

export const clockTool: ToolSpec = {
  name: "get_time",
  description: "Current time.",
  parameters: { type: "object", properties: {} },
};

export const system = "You are a weather assistant. Answer in one sentence.";

/** Stands for the guard's situational prefix, which the runtime puts first in the user turn. */
export const situationalPrefix = "[call chain: Main.run → Weather.forecast]";

export const firstUserTurn: Message = {
  role: "user",
  content: [
    { type: "text", text: situationalPrefix },
    { type: "text", text: "What is the weather in Paris for the next 3 days?" },
  ],
};

/** The structured final answer the response-format tests ask for. */
export const weatherReportFormat: ResponseFormat = {
  name: "weather_report",
  schema: {
    type: "object",
    properties: { city: { type: "string" }, tempC: { type: "number" }, sky: { type: "string" } },
    required: ["city", "tempC", "sky"],
    additionalProperties: false,
  },
};

/** The answer every response-format fixture carries, as its JSON text would parse. */
export const weatherReport = { city: "Paris", tempC: 21, sky: "sunny" };
