/**
 * A small MCP server for examples/mcp-agent.ts: a notebook with `add_note`,
 * `list_notes` and `search_notes`, built with the SDK's low-level `Server`
 * class and plain JSON Schemas, speaking MCP over stdin/stdout. Any MCP
 * server works the same way with mcpTools; this one keeps the example
 * self-contained.
 *
 * Run alone: node --require tsx/cjs examples/mcp-notes-server.ts (then speak JSON-RPC on stdin)
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";

const notes: string[] = [];

const server = new Server({ name: "notes", version: "1.0.0" }, { capabilities: { tools: {} } });

server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [
    {
      name: "add_note",
      description: "Add a note to the notebook.",
      inputSchema: { type: "object", properties: { text: { type: "string", description: "The note" } }, required: ["text"] },
    },
    { name: "list_notes", description: "Every note, oldest first.", inputSchema: { type: "object", properties: {} } },
    {
      name: "search_notes",
      description: "Notes containing a word.",
      inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
    },
  ],
}));

server.setRequestHandler(CallToolRequestSchema, (request): CallToolResult => {
  const args = (request.params.arguments ?? {}) as Record<string, string>;
  switch (request.params.name) {
    case "add_note":
      notes.push(args["text"]!);
      return { content: [{ type: "text", text: `Saved note ${notes.length}.` }] };
    case "list_notes":
      return { content: [{ type: "text", text: notes.map((note, index) => `${index + 1}. ${note}`).join("\n") || "(no notes)" }] };
    case "search_notes": {
      const found = notes.filter((note) => note.toLowerCase().includes(String(args["query"]).toLowerCase()));
      return { content: [{ type: "text", text: found.join("\n") || "(nothing found)" }] };
    }
    default:
      return { content: [{ type: "text", text: `Unknown tool ${request.params.name}` }], isError: true };
  }
});

void server.connect(new StdioServerTransport());
