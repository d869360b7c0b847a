/**
 * With captureContent off, no tool data reaches a span: not the arguments a
 * failed validation quotes, not a failing tool's error text (found by an
 * attack review, 2026-12-03: both were the execute_tool span's status).
 */
import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { Agent } from "../agent/agent";
import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "../runtime/runtime";
import { tool } from "../tools/tool";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
beforeAll(() => trace.setGlobalTracerProvider(provider));
afterAll(() => trace.disable());

const SECRET = "4111-1111-1111-1111";

describe("captureContent off keeps tool data off the spans", () => {
  it.each([
    ["arguments that fail validation", { card: SECRET }],
    ["arguments of a tool that fails", { card: "visa" }],
  ])("%s", async (_label, input) => {
    exporter.reset();
    const charge = tool({
      name: "charge",
      description: "Charge a card.",
      parameters: { type: "object", properties: { card: { enum: ["visa", "amex"] } }, required: ["card"] },
      execute: async () => {
        // What a tool (or an MCP server's isError answer) returns as its error: tool data.
        throw new Error(`card ${SECRET} was declined`);
      },
    });
    const model = new ScriptedProvider([{ toolCalls: [{ name: "charge", input }] }, "Could not charge."]);
    class Cashier extends Agent {}
    const runtime = new Runtime({ provider: model, telemetry: { captureContent: false } });
    await new Cashier({ runtime }).ask("Charge it.", { tools: [charge] });
    const spans = exporter.getFinishedSpans();
    const leaked = spans
      .map((span) => JSON.stringify({ name: span.name, attributes: span.attributes, status: span.status, events: span.events }))
      .filter((text) => text.includes(SECRET));
    expect(leaked).toEqual([]);
  });
});
