/**
 * An application set up as docs/observability.md says (its first example
 * and "Viewing traces in Jaeger", steps 2-3), run by otlp-export.test.ts as
 * a tsx child process with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a local
 * OTLP/HTTP receiver: a NodeTracerProvider with a service-name resource, a
 * BatchSpanProcessor over OTLPTraceExporter(), register(), one run of an
 * agent that calls a tool, then shutdown(). Prints the answer.
 */
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { Agent } from "../../agent/agent";
import { ScriptedProvider } from "../../model/scripted-provider";
import { Runtime } from "../../runtime/runtime";

class Librarian extends Agent {
  static methodOptions = {
    shelf_of: { tool: true, description: "The shelf a title is on.", parameters: { type: "object", properties: { title: { type: "string" } }, required: ["title"] } },
  };
  static runtime = new Runtime({
    provider: new ScriptedProvider(
      [
        { toolCalls: [{ name: "shelf_of", input: { title: "Dune" } }], usage: { inputTokens: 12, outputTokens: 4 } },
        { text: "Shelf 4.", usage: { inputTokens: 20, outputTokens: 3 } },
      ],
      { modelId: "librarian-model" },
    ),
  });
  shelf_of({ title }: { title: string }): string {
    return `${title}: shelf 4`;
  }
  async research(question: string): Promise<string> {
    return this.ask(question);
  }
}

async function main(): Promise<void> {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": "research-agent" }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())], // http://localhost:4318/v1/traces by default
  });
  provider.register();
  const answer = await new Librarian().research("Where is Dune shelved?");
  await provider.shutdown(); // flushes the last spans before the process exits
  process.stdout.write(`${answer}\n`);
}

void main();
