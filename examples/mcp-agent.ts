/**
 * An agent using the tools of an MCP server, traced with OpenTelemetry.
 *
 * The notes server (examples/mcp-notes-server.ts) runs as a child process
 * over stdio; `mcpTools(client)` turns its tools into Rein tools, so every
 * call goes through Rein's guards and is recorded like any other. An
 * OpenTelemetry SDK (sdk-trace-base, in memory) collects the run's spans,
 * printed at the end as a tree: `invoke_agent`, `chat`, `execute_tool`.
 * By default the model is ScriptedProvider, so it needs no API key; pass
 * another provider to run it against a real model.
 *
 * Run: pnpm exec tsx --tsconfig tsconfig.test.json examples/mcp-agent.ts
 */
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { Agent, mcpTools, Runtime, ScriptedProvider, type ModelProvider } from "@rein/core";

export class NoteTaker extends Agent {
  static instructions = "Keep the user's notebook. Use the notebook tools; answer in one sentence.";

  async remember(fact: string): Promise<string> {
    return this.ask(`Save this and then tell me every note: ${fact}`);
  }
}

/** The spans as an indented tree, one line per span: `name  key=value …`. */
export function spanTree(spans: readonly ReadableSpan[]): string[] {
  const lines: string[] = [];
  const children = (parent: string | undefined) =>
    spans.filter((span) => span.parentSpanContext?.spanId === parent).sort((a, b) => (a.startTime[0] - b.startTime[0]) || (a.startTime[1] - b.startTime[1]));
  const shown = ["gen_ai.request.model", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.tool.call.id"];
  const visit = (span: ReadableSpan, depth: number) => {
    const attributes = shown.filter((key) => span.attributes[key] !== undefined).map((key) => `${key.replace("gen_ai.", "")}=${String(span.attributes[key])}`);
    lines.push(`${"  ".repeat(depth)}${span.name}${attributes.length > 0 ? `  ${attributes.join(" ")}` : ""}`);
    for (const child of children(span.spanContext().spanId)) visit(child, depth + 1);
  };
  for (const root of children(undefined)) visit(root, 0);
  return lines;
}

/** Runs the example: the answer, the notes the server holds afterwards, and the span tree. */
export async function runMcpAgent(
  options: { provider?: ModelProvider; print?: (line: string) => void } = {},
): Promise<{ answer: string; notes: string; spans: string[] }> {
  const print = options.print ?? console.log;
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(tracerProvider);

  const client = new Client({ name: "mcp-agent-example", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ["--require", "tsx/cjs", join(__dirname, "mcp-notes-server.ts")],
      stderr: "inherit",
    }),
  );
  try {
    const tools = await mcpTools(client, { exclude: ["search_notes"] });
    print(`MCP tools: ${tools.map((tool) => tool.spec.name).join(", ")}`);
    const provider =
      options.provider ??
      new ScriptedProvider([
        { toolCalls: [{ name: "add_note", input: { text: "The launch moved to Tuesday." } }] },
        { toolCalls: [{ name: "list_notes", input: {} }] },
        "Saved: your notebook now says the launch moved to Tuesday.",
      ]);
    const noteTaker = new NoteTaker({ runtime: new Runtime({ provider }), tools });
    const answer = await noteTaker.remember("The launch moved to Tuesday.");
    print(`answer: ${answer}`);
    const listed = (await client.callTool({ name: "list_notes", arguments: {} })) as { content: { type: string; text?: string }[] };
    const notes = listed.content.map((item) => item.text ?? "").join("\n");
    print(`notes on the server: ${notes}`);
    await tracerProvider.forceFlush();
    const spans = spanTree(exporter.getFinishedSpans());
    print("spans:");
    for (const line of spans) print(`  ${line}`);
    return { answer, notes, spans };
  } finally {
    await client.close();
    trace.disable();
    await tracerProvider.shutdown();
  }
}

if (require.main === module) void runMcpAgent();
