import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool as SdkTool } from "@modelcontextprotocol/sdk/types.js";
import { mcpTools } from "./mcp-tools";

/**
 * MCP clients are robust (DESIGN 5.2): the real SDK client and server, over
 * the SDK's in-memory transport.
 */

interface Behaviour {
  /** The tools/list answer for a cursor. */
  list(cursor: string | undefined): { tools: SdkTool[]; nextCursor?: string };
  /** Runs while a call is in flight (the server may send notifications). */
  onCall?(send: (notification: { method: string; params: Record<string, unknown> }) => Promise<void>): Promise<void>;
}

async function connect(behaviour: Behaviour): Promise<{ client: Client; server: Server; listings: () => number }> {
  const server = new Server({ name: "robust-test", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
  let listings = 0;
  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    listings += 1;
    return behaviour.list(request.params?.cursor);
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    await behaviour.onCall?.((notification) => extra.sendNotification(notification as never));
    return { content: [{ type: "text", text: `done ${request.params.name}` }] };
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "rein-test", version: "1.0.0" });
  await client.connect(clientSide);
  return { client, server, listings: () => listings };
}

const tool = (name: string): SdkTool => ({ name, inputSchema: { type: "object" } });

/** Collects process warnings while `fn` runs. */
const warnings: string[] = [];
const onWarning = (message: string) => warnings.push(message);
beforeEach(() => warnings.splice(0));

async function warningsOf<T>(fn: () => Promise<T>): Promise<{ value: T; warnings: string[] }> {
  const from = warnings.length;
  const value = await fn();
  return { value, warnings: warnings.slice(from) };
}

describe("mcpTools with a misbehaving server (real SDK, in-memory transport)", () => {
  it("a stray progress notification fails no in-flight call of the client", async () => {
    const { client, server } = await connect({
      list: () => ({ tools: [tool("slow"), tool("other")] }),
      onCall: async (send) => {
        await send({ method: "notifications/progress", params: { progressToken: "nobody-asked", progress: 1 } });
      },
    });
    const reported: string[] = [];
    client.onerror = (error) => reported.push(error.message);
    try {
      const tools = await mcpTools(client);
      const results = await Promise.all([tools[0]!.execute({}), tools[1]!.execute({}), tools[0]!.execute({})]);
      expect(results).toEqual(["done slow", "done other", "done slow"]);
      // The SDK did report the stray notification: the handler chained before stays informed.
      expect(reported.some((message) => message.includes("progress notification for an unknown token"))).toBe(true);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("a server that always answers another nextCursor is read maxPages pages, with a warning naming the bound", async () => {
    const { client, server, listings } = await connect({
      list: (cursor) => {
        const page = Number(cursor ?? 0);
        return { tools: [tool(`t${page}`)], nextCursor: String(page + 1) };
      },
    });
    try {
      const { value: tools, warnings } = await warningsOf(() => mcpTools(client, { maxPages: 5, onWarning }));
      expect(listings()).toBe(5);
      expect(tools.map((item) => item.spec.name)).toEqual(["t0", "t1", "t2", "t3", "t4"]);
      expect(warnings.some((message) => message.includes("maxPages = 5"))).toBe(true);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("the default page bound stops an endless server too", async () => {
    const { client, server, listings } = await connect({ list: (cursor) => ({ tools: [], nextCursor: `${cursor ?? ""}x`.slice(-8) }) });
    try {
      const { warnings } = await warningsOf(() => mcpTools(client, { onWarning }));
      expect(listings()).toBe(100);
      expect(warnings.some((message) => message.includes("maxPages = 100"))).toBe(true);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("a 150,000-tool page does not overflow the stack; maxTools keeps the first ones with a warning naming the bound", async () => {
    // Node 20's default stack holds a spread of about 126,000 arguments: the spreads this guards against (6047ba6:
    // `listed.push(...page.tools)`, `tools.splice(0, n, ...tools)`) both throw RangeError at 150,000, put back. The
    // 200,000 used before overflowed with a wider margin, for a third more CPU (each tool is built and kept).
    const many = Array.from({ length: 150_000 }, (_, index) => tool(`tool_${index}`));
    const { client, server } = await connect({ list: () => ({ tools: many }) });
    try {
      const { value: tools, warnings } = await warningsOf(() => mcpTools(client, { maxTools: 250_000, onWarning }));
      expect(tools).toHaveLength(150_000);
      expect(warnings).toEqual([]);
      const bounded = await warningsOf(() => mcpTools(client, { onWarning }));
      expect(bounded.value).toHaveLength(10_000);
      expect(bounded.value[9_999]!.spec.name).toBe("tool_9999");
      expect(bounded.warnings.some((message) => message.includes("maxTools = 10000"))).toBe(true);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("bad and duplicate names are skipped with a warning naming each, the others stay — on a refresh too", async () => {
    let listing: SdkTool[] = [tool("search"), tool("files.read"), tool("search"), tool("fetch")];
    const { client, server, listings } = await connect({ list: () => ({ tools: listing }) });
    try {
      const first = await warningsOf(() => mcpTools(client, { onWarning }));
      const tools = first.value;
      expect(tools.map((item) => item.spec.name)).toEqual(["search", "fetch"]);
      expect(first.warnings.some((message) => message.includes('"files.read"'))).toBe(true);
      expect(first.warnings.some((message) => message.includes("second MCP tool named 'search'"))).toBe(true);

      // A refresh whose list has a bad name still takes the new list (it used to freeze the old one).
      listing = [tool("search"), tool("bad name"), tool("summarize")];
      const refreshed = await warningsOf(async () => {
        await server.sendToolListChanged();
        for (let tries = 0; tries < 1000 && tools.map((item) => item.spec.name).join() !== "search,summarize"; tries++) {
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      });
      expect(listings()).toBe(2);
      expect(tools.map((item) => item.spec.name)).toEqual(["search", "summarize"]);
      expect(refreshed.warnings.some((message) => message.includes('"bad name"'))).toBe(true);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("maxPages and maxTools must be positive integers", async () => {
    const { client, server } = await connect({ list: () => ({ tools: [] }) });
    try {
      await expect(mcpTools(client, { maxPages: 0 })).rejects.toThrow("maxPages must be a positive integer, got 0");
      await expect(mcpTools(client, { maxTools: 1.5 })).rejects.toThrow("maxTools must be a positive integer, got 1.5");
    } finally {
      await client.close();
      await server.close();
    }
  });
});
