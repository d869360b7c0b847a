/**
 * An MCP server's tool list is JSON: a schema holding a "~standard" key is
 * still JSON Schema, and one tool whose schema cannot be offered is skipped
 * with a warning, never taking the server's other tools with it (found by
 * an attack review, 2026-12-03: mcpTools() rejected as a whole).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool as SdkTool } from "@modelcontextprotocol/sdk/types.js";
import { mcpTools } from "./mcp-tools";

async function connect(tools: SdkTool[]): Promise<{ client: Client; server: Server }> {
  const server = new Server({ name: "hostile", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => ({ content: [{ type: "text", text: `done ${request.params.name}` }] }));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "rein-probe", version: "1.0.0" });
  await client.connect(clientSide);
  return { client, server };
}

describe("an MCP tool whose schema the model cannot be offered", () => {
  it("does not take the server's other tools down with it", async () => {
    // Valid for the MCP SDK (type "object", extra keys allowed); JSON data, not a Standard Schema object.
    const odd: SdkTool = { name: "odd", inputSchema: { type: "object", "~standard": { vendor: "x", version: 1 } } };
    const good: SdkTool = { name: "good", inputSchema: { type: "object" } };
    const { client, server } = await connect([odd, good]);
    const warnings: string[] = [];
    try {
      const outcome = await mcpTools(client, { onWarning: (message) => warnings.push(message) }).then(
        (tools) => ({ names: tools.map((tool) => tool.spec.name) }),
        (error: unknown) => ({ error: String(error) }),
      );
      // Either both tools pass through, or the odd one is skipped with a warning; never a rejected mcpTools.
      expect(outcome).toEqual({ names: ["odd", "good"] });
      expect(warnings).toEqual([]);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("through a client that does not check the list (McpClientLike), one whose inputSchema does not describe an object is skipped with a warning naming it; the others stay", async () => {
    const client = {
      listTools: async () => ({ tools: [{ name: "bad", inputSchema: { type: "string" } }, { name: "good", inputSchema: { type: "object" } }] }),
      callTool: async () => ({ content: [] }),
      setNotificationHandler: () => undefined,
    };
    const warnings: string[] = [];
    const tools = await mcpTools(client, { onWarning: (message) => warnings.push(message) });
    expect(tools.map((tool) => tool.spec.name)).toEqual(["good"]);
    expect(warnings).toEqual([expect.stringMatching(/^mcpTools: skipped the MCP tool 'bad': .*type "object"/)]);
  });
});
