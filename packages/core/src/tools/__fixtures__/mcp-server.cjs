/**
 * A real MCP server for the mcpTools tests, built with the SDK's server
 * classes. `node mcp-server.cjs stdio` speaks over stdin/stdout;
 * `node mcp-server.cjs http` listens on 127.0.0.1 (a free port, printed as
 * `listening <port>` on stdout) with the streamable HTTP transport.
 */
const { randomUUID } = require("node:crypto");
const { createServer } = require("node:http");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const z = require("zod");

// A 1×1 transparent PNG.
const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

function buildServer() {
  const server = new McpServer({ name: "rein-test-server", version: "1.0.0" }, { capabilities: { tools: { listChanged: true }, logging: {} } });
  let cancelled = 0;
  const text = (value) => ({ content: [{ type: "text", text: value }] });

  server.registerTool("echo", { description: "Echo the text back.", inputSchema: { text: z.string().describe("What to echo") } }, ({ text: value }) =>
    text(`echo: ${value}`),
  );
  server.registerTool("job_status", { description: "Status of a job.", inputSchema: { job: z.string() } }, () => text("still running"));
  server.registerTool("picture", { description: "A picture with a caption." }, () => ({
    content: [
      { type: "text", text: "a transparent pixel" },
      { type: "image", data: PIXEL, mimeType: "image/png" },
    ],
  }));
  server.registerTool(
    "weather",
    {
      description: "Weather in a city.",
      inputSchema: { city: z.string() },
      outputSchema: { city: z.string(), celsius: z.number() },
    },
    ({ city }) => {
      const structuredContent = { city, celsius: 21 };
      return { content: [{ type: "text", text: JSON.stringify(structuredContent) }], structuredContent };
    },
  );
  server.registerTool("attachments", { description: "An embedded resource, a resource link and audio." }, () => ({
    content: [
      { type: "resource", resource: { uri: "file:///notes.txt", mimeType: "text/plain", text: "the notes" } },
      { type: "resource_link", uri: "file:///report.pdf", name: "report.pdf" },
      { type: "audio", data: PIXEL, mimeType: "audio/wav" },
    ],
  }));
  server.registerTool("broken", { description: "Always fails." }, () => ({ content: [{ type: "text", text: "the widget is broken" }], isError: true }));
  server.registerTool("crash", { description: "Stops the server mid-call." }, () => {
    setImmediate(() => process.exit(3));
    return new Promise(() => {});
  });
  // A tool without an inputSchema gets only the request's extra (signal, ids) as its argument.
  server.registerTool("wait", { description: "Waits until cancelled; says 'waiting' in a log message first." }, async (extra) => {
    await server.server.sendLoggingMessage({ level: "info", data: "waiting" });
    return new Promise((resolve) => {
      extra.signal.addEventListener("abort", () => {
        cancelled++;
        resolve(text("cancelled"));
      });
    });
  });
  server.registerTool("cancellations", { description: "How many calls were cancelled." }, () => text(String(cancelled)));
  server.registerTool("admin_reset", { description: "Dangerous: resets everything." }, () => text("reset"));
  server.registerTool("add_tool", { description: "Adds a tool to this server.", inputSchema: { name: z.string() } }, ({ name }) => {
    // Registering after connect makes the server send notifications/tools/list_changed.
    server.registerTool(name, { description: `Added at run time: ${name}.` }, () => text(`${name} works`));
    return text(`added ${name}`);
  });
  return server;
}

async function main() {
  const mode = process.argv[2];
  if (mode === "stdio") {
    await buildServer().connect(new StdioServerTransport());
    return;
  }
  // One MCP session per client (a transport and a server each), as the SDK's examples do.
  const sessions = new Map();
  const http = createServer(async (request, response) => {
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    const body = chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString("utf8"));
    const id = request.headers["mcp-session-id"];
    let transport = typeof id === "string" ? sessions.get(id) : undefined;
    if (transport === undefined) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => sessions.set(sessionId, transport),
      });
      await buildServer().connect(transport);
    }
    await transport.handleRequest(request, response, body);
  });
  http.listen(0, "127.0.0.1", () => process.stdout.write(`listening ${http.address().port}\n`));
}

main().catch((error) => {
  process.stderr.write(`${error && error.stack}\n`);
  process.exit(1);
});
