/**
 * The steps of docs/observability.md ("Viewing traces in Jaeger", steps 2-3,
 * and the first example) run for real: NodeTracerProvider with a
 * service-name resource, a BatchSpanProcessor over OTLPTraceExporter(),
 * `provider.register()`, a run, `provider.shutdown()` — the exporter POSTing
 * OTLP/HTTP JSON to a receiver on 127.0.0.1 that stands in for Jaeger's (or
 * any collector's) port 4318, reached through OTEL_EXPORTER_OTLP_ENDPOINT
 * as the doc says.
 */
import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { gunzipSync } from "node:zlib";

const ROOT = join(__dirname, "..", "..", "..", "..");

/** One OTLP/JSON attribute: `{ key, value: { stringValue | intValue | … } }`. */
interface OtlpAttribute {
  readonly key: string;
  readonly value: Record<string, unknown>;
}
interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes: readonly OtlpAttribute[];
}
interface OtlpExport {
  readonly resourceSpans: readonly { resource: { attributes: readonly OtlpAttribute[] }; scopeSpans: readonly { spans: readonly OtlpSpan[] }[] }[];
}

/** What the receiver was sent: each POST's path, content type and decoded body. */
interface Received {
  readonly path: string;
  readonly contentType: string;
  readonly body: OtlpExport;
}

function startReceiver(): Promise<{ server: Server; url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const raw = Buffer.concat(chunks);
      const text = (request.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw).toString("utf8");
      received.push({ path: request.url ?? "", contentType: String(request.headers["content-type"]), body: JSON.parse(text) as OtlpExport });
      // What a collector answers to a complete OTLP/HTTP JSON export.
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  return new Promise((ready) => server.listen(0, "127.0.0.1", () => ready({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received })));
}

const valueOf = (attributes: readonly OtlpAttribute[], key: string): unknown => {
  const value = attributes.find((attribute) => attribute.key === key)?.value;
  return value === undefined ? undefined : Object.values(value)[0];
};

describe("docs/observability.md: spans exported over OTLP/HTTP to a collector", () => {
  let receiver: { server: Server; url: string; received: Received[] };
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => new Promise((closed) => receiver.server.close(closed)));

  it("an app with NodeTracerProvider + BatchSpanProcessor(new OTLPTraceExporter()) + register() and OTEL_EXPORTER_OTLP_ENDPOINT: after shutdown() the collector holds the run's trace — invoke_agent with its chat and execute_tool children, gen_ai attributes, the service name", async () => {
    // The app is its own process, as the doc's is: the exporter loads node:http with a dynamic import, which jest's CommonJS sandbox refuses.
    const { stdout } = await promisify(execFile)(process.execPath, ["--require", require.resolve("tsx/cjs"), join(__dirname, "__fixtures__", "otlp-app.ts")], {
      cwd: ROOT,
      env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, "tsconfig.test.json"), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
    const answer = stdout.trim();
    expect(answer).toBe("Shelf 4.");
    expect(receiver.received.length).toBeGreaterThan(0);
    for (const post of receiver.received) {
      expect(post.path).toBe("/v1/traces");
      expect(post.contentType).toMatch(/^application\/json/);
    }
    const resources = receiver.received.flatMap((post) => post.body.resourceSpans);
    for (const resource of resources) expect(valueOf(resource.resource.attributes, "service.name")).toBe("research-agent");
    const spans = resources.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans));
    expect(spans.map((span) => span.name).sort()).toEqual(["chat librarian-model", "chat librarian-model", "execute_tool shelf_of", "invoke_agent Librarian"]);

    const root = spans.find((span) => span.name === "invoke_agent Librarian")!;
    expect(root.parentSpanId ?? "").toBe("");
    expect(valueOf(root.attributes, "gen_ai.operation.name")).toBe("invoke_agent");
    expect(valueOf(root.attributes, "gen_ai.agent.name")).toBe("Librarian");
    for (const span of spans.filter((span) => span !== root)) {
      expect(span.traceId).toBe(root.traceId);
      expect(span.parentSpanId).toBe(root.spanId);
    }
    const chats = spans.filter((span) => span.name.startsWith("chat "));
    // OTLP span kinds: 1 INTERNAL, 3 CLIENT.
    expect(chats.map((span) => span.kind)).toEqual([3, 3]);
    expect(chats.map((span) => valueOf(span.attributes, "gen_ai.request.model"))).toEqual(["librarian-model", "librarian-model"]);
    expect(chats.map((span) => Number(valueOf(span.attributes, "gen_ai.usage.input_tokens"))).sort((a, b) => a - b)).toEqual([12, 20]);
    const toolSpan = spans.find((span) => span.name === "execute_tool shelf_of")!;
    expect(toolSpan.kind).toBe(1);
    expect(valueOf(toolSpan.attributes, "gen_ai.tool.name")).toBe("shelf_of");
  });
});
