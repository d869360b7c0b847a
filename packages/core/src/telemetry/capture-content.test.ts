import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { Agent } from "../agent/agent";
import type { ModelRequest } from "../model/model-provider";
import { ScriptedProvider, type ScriptedTurn } from "../model/scripted-provider";
import { Runtime } from "../runtime/runtime";
import { tool } from "../tools/tool";

/**
 * `telemetry.captureContent` captures a loop's conversation in work linear
 * in it: each chat span carries only the messages new since the loop's
 * previous chat span. Measured in bytes put on spans, not in time.
 */
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
beforeAll(() => trace.setGlobalTracerProvider(provider));
afterAll(() => trace.disable());
beforeEach(() => exporter.reset());

class Reader extends Agent {
  async read(): Promise<string> {
    return this.ask("Read every page.", { tools: [page], maxIterations: 500 });
  }
}

/** Each call returns a 1 KB page: the conversation grows by about 1 KB per request. */
const page = tool({ name: "page", description: "The next page.", execute: ({ n }: { n: number }) => `page ${n}: ${"x".repeat(1000)}` });

/** Runs a loop of `requests` model requests; returns the bytes of input messages its chat spans carry, and the last request. */
async function capturedBytes(requests: number): Promise<{ bytes: number; last: ModelRequest }> {
  exporter.reset();
  const turns: ScriptedTurn[] = Array.from({ length: requests - 1 }, (_, n) => ({ toolCalls: [{ name: "page", input: { n } }] }));
  turns.push("Done.");
  const model = new ScriptedProvider(turns);
  await new Reader({ runtime: new Runtime({ provider: model, telemetry: { captureContent: true }, loopDetection: { enabled: false } }) }).read();
  let bytes = 0;
  for (const span of exporter.getFinishedSpans()) {
    const messages = span.attributes["gen_ai.input.messages"];
    if (typeof messages === "string") bytes += messages.length;
  }
  return { bytes, last: model.requests.at(-1)! };
}

test("the input messages captured over a loop add up to about one copy of its conversation, however many requests it made", async () => {
  const small = await capturedBytes(20);
  const large = await capturedBytes(80);
  const conversation = (request: ModelRequest) => JSON.stringify(request.messages).length;
  // One copy of the conversation, plus the last answer each span repeats at most once: within 10% of it.
  expect(small.bytes).toBeLessThan(conversation(small.last) * 1.1);
  expect(large.bytes).toBeLessThan(conversation(large.last) * 1.1);
  // 4x the requests is about 4x the bytes (all-messages-per-span was ~16x: 80 spans of up to 80 KB).
  expect(large.bytes / small.bytes).toBeLessThan(5);
});

test("each chat span after the first says how many earlier messages it leaves out, and the spans together hold every message once", async () => {
  const { last } = await capturedBytes(4);
  const chats = exporter
    .getFinishedSpans()
    .filter((span) => span.name.startsWith("chat"))
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
  expect(chats.map((span) => span.attributes["rein.input.messages.skipped"])).toEqual([undefined, 1, 3, 5]);
  const joined = chats.flatMap((span) => JSON.parse(String(span.attributes["gen_ai.input.messages"])) as unknown[]);
  expect(joined).toEqual(JSON.parse(JSON.stringify(last.messages)));
});
