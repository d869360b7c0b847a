import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { ToolLoopError, McpToolError } from "@rein/guard";
import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import type { ModelRequest } from "../model/model-provider";
import { ScriptedProvider, type ScriptedTurn } from "../model/scripted-provider";
import { Runtime } from "../runtime/runtime";
import type { RunEvent } from "../runtime/runtime-events";
import { InMemorySessionStore } from "@rein/session";
import { SessionNodeWriter } from "@rein/session";
import { mcpTools } from "./mcp-tools";
import type { Tool } from "./tool";

const SERVER = join(__dirname, "__fixtures__", "mcp-server.cjs");

interface Connection {
  readonly client: Client;
  close(): Promise<void>;
}

/** A client over stdio: the SDK's transport starts the server as a child process. */
async function overStdio(): Promise<Connection> {
  const client = new Client({ name: "rein-test", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [SERVER, "stdio"], stderr: "ignore" }));
  return { client, close: () => client.close() };
}

/** The HTTP server process: started on first use, and again once a test has ended it (the `crash` tool exits it). */
let httpServer: { child: ChildProcess; port: Promise<number> } | undefined;
afterAll(() => httpServer && stop(httpServer.child));

function startHttpServer(): { child: ChildProcess; port: Promise<number> } {
  const child = spawn(process.execPath, [SERVER, "http"], { stdio: ["ignore", "pipe", "inherit"] });
  const port = new Promise<number>((resolve, reject) => {
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const match = /listening (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`MCP test server exited with ${code} before listening`)));
  });
  return { child, port };
}

/**
 * A client over streamable HTTP to the server process on 127.0.0.1. The HTTP tests share that process (about 0.4 s
 * of CPU to start, most of it loading the SDK): it builds a server of its own for each client's MCP session, so a
 * test sees only the tools, notifications and counts of its own session, as with a process of its own.
 */
async function overHttp(): Promise<Connection> {
  if (httpServer === undefined || httpServer.child.exitCode !== null || httpServer.child.signalCode !== null) httpServer = startHttpServer();
  const port = await httpServer.port;
  const client = new Client({ name: "rein-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
  return { client, close: () => client.close().catch(() => undefined) };
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill();
  });
}

class Assistant extends Agent {}

function agentWith(turns: ScriptedTurn[], options: { onEvent?: (event: RunEvent) => void; loopDetection?: object } = {}) {
  const provider = new ScriptedProvider(turns);
  const runtime = new Runtime({ provider, ...(options.onEvent ? { onEvent: options.onEvent } : {}), ...(options.loopDetection ? { loopDetection: options.loopDetection } : {}) });
  return { provider, agent: new Assistant({ runtime }) };
}

function toolResults(request: ModelRequest | undefined) {
  const last = request?.messages[request.messages.length - 1];
  return (last?.content ?? []).filter((block) => block.type === "tool_result") as { content: unknown; isError?: boolean }[];
}

const names = (tools: readonly { name: string }[]) => tools.map((tool) => tool.name).sort();

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setImmediate(resolve));
}

describe.each([
  ["stdio", overStdio],
  ["streamable HTTP", overHttp],
])("mcpTools over %s", (_transport, connect) => {
  let connection: Connection;
  beforeEach(async () => {
    connection = await connect();
  });
  afterEach(async () => {
    await connection.close();
  });

  it("keeps the server's names, honours include/exclude, and passes schemas through", async () => {
    const { client } = connection;
    const listed = (await client.listTools()).tools;
    const all = await mcpTools(client);
    expect(names(all.map((tool) => tool.spec))).toEqual(names(listed));
    for (const tool of all) {
      const original = listed.find((entry) => entry.name === tool.spec.name)!;
      expect(tool.spec.parameters).toEqual(original.inputSchema);
      expect(tool.spec.description).toBe(original.description);
    }
    expect(names((await mcpTools(client, { include: ["echo", "weather"] })).map((tool) => tool.spec))).toEqual(["echo", "weather"]);
    const safe = await mcpTools(client, { exclude: ["admin_reset", "crash"] });
    expect(safe.map((tool) => tool.spec.name)).not.toContain("admin_reset");
    expect(safe.length).toBe(listed.length - 2);
    await expect(mcpTools(client, { only: ["echo"] } as never)).rejects.toThrow("unknown option 'only'");
  });

  it("round trip: the model calls MCP tools and sees text, structured, image and error results; the calls are recorded", async () => {
    const tools = await mcpTools(connection.client, { include: ["echo", "weather", "picture", "broken", "attachments"] });
    const { provider, agent } = agentWith([
      {
        toolCalls: [
          { name: "echo", input: { text: "hello" } },
          { name: "weather", input: { city: "Oslo" } },
          { name: "picture", input: {} },
          { name: "broken", input: {} },
          { name: "echo", input: { text: 42 } },
          { name: "attachments", input: {} },
        ],
      },
      "All done.",
    ]);
    const store = new InMemorySessionStore();
    store.createSession("s", {});
    const context = new Context({}, { store: new SessionNodeWriter(store, "s") });
    await expect(agent.ask("Use the tools.", { tools, context })).resolves.toBe("All done.");
    const [echo, weather, picture, broken, badArguments, attachments] = toolResults(provider.requests[1]);
    expect(echo).toEqual(expect.objectContaining({ content: "echo: hello" }));
    expect(echo.isError).toBeFalsy();
    expect(JSON.parse(String(weather.content))).toEqual({ city: "Oslo", celsius: 21 });
    expect(picture.content).toEqual([
      { type: "text", text: "a transparent pixel" },
      { type: "image", source: { type: "base64", mediaType: "image/png", data: expect.stringMatching(/^iVBOR/) } },
    ]);
    expect(broken).toMatchObject({ isError: true });
    expect(String(broken.content)).toContain("MCP tool 'broken' reported an error: the widget is broken");
    // Arguments are checked against the server's schema before the server is called.
    expect(badArguments).toMatchObject({ isError: true });
    expect(String(badArguments.content)).toContain("Call 'echo' again with arguments matching its schema");
    expect(attachments.content).toBe("the notes\nResource: report.pdf <file:///report.pdf>\n[audio (audio/wav) not shown]");
    const nodes = store.readNodes("s");
    expect(nodes.find((node) => node.name === "echo" && node.metadata["status"] === "completed")?.output).toBe("echo: hello");
    expect(nodes.find((node) => node.name === "weather")?.output).toEqual({ blocks: [{ type: "text", text: '{"city":"Oslo","celsius":21}' }], structured: { city: "Oslo", celsius: 21 } });
    expect(nodes.find((node) => node.name === "broken")?.metadata).toMatchObject({ status: "error", error: expect.stringContaining("McpToolError") });
  });

  it("an MCP tool that always returns the same result is warned, then blocked by loop detection", async () => {
    const tools = await mcpTools(connection.client, { include: ["job_status"] });
    const events: RunEvent[] = [];
    const provider = new ScriptedProvider([{ toolCalls: [{ name: "job_status", input: { job: "42" } }] }], { whenExhausted: "repeat-last" });
    const runtime = new Runtime({
      provider,
      maxIterations: 30,
      loopDetection: { enabled: true, warningThreshold: 3, criticalThreshold: 5, globalCircuitBreakerThreshold: 30 },
      onEvent: (event) => events.push(event),
    });
    await expect(new Assistant({ runtime }).ask("Wait for job 42.", { tools })).rejects.toThrow(ToolLoopError);
    const warning = events.findIndex((event) => event.type === "loop-warning");
    const block = events.findIndex((event) => event.type === "loop-block");
    expect(warning).toBeGreaterThanOrEqual(0);
    expect(block).toBeGreaterThan(warning);
    expect(events[warning]).toMatchObject({ name: "job_status" });
    // Until the first block every call reached the server and got its same answer; from it on, none did.
    const outputs = (from: number, to: number) =>
      events.slice(from, to).flatMap((event) => (event.type === "tool-result" ? [String(event.output)] : []));
    const before = outputs(0, block);
    expect(before.length).toBeGreaterThanOrEqual(3);
    expect(new Set(before)).toEqual(new Set(["still running"]));
    const after = outputs(block, events.length);
    expect(after.length).toBeGreaterThan(0);
    for (const output of after) expect(JSON.parse(output)).toMatchObject({ status: "blocked", reason: "tool-loop" });
  });

  it("the run's AbortSignal cancels the MCP request on the server", async () => {
    const tools = await mcpTools(connection.client, { include: ["wait"] });
    const controller = new AbortController();
    // Cancelled once the server is running the call (it logs 'waiting' first).
    connection.client.setNotificationHandler(LoggingMessageNotificationSchema, () => controller.abort());
    const { agent } = agentWith([{ toolCalls: [{ name: "wait", input: {} }] }, "never"]);
    await expect(agent.ask("Wait.", { tools, signal: controller.signal })).rejects.toThrow();
    // The server saw notifications/cancelled for that request (its handler's signal fired).
    await until(async () => {
      const result = (await connection.client.callTool({ name: "cancellations", arguments: {} })) as { content: { text: string }[] };
      return result.content[0].text === "1";
    });
  });

  it("list-changed notifications refresh the tool list between runs, never during one", async () => {
    const tools = await mcpTools(connection.client, { exclude: ["crash"] });
    expect(names(tools.map((tool) => tool.spec))).not.toContain("fresh_tool");
    const { provider, agent } = agentWith([{ toolCalls: [{ name: "add_tool", input: { name: "fresh_tool" } }] }, { toolCalls: [{ name: "echo", input: { text: "x" } }] }, "done", "second run"]);
    await agent.ask("Add a tool.", { tools });
    // Within the run, every request offered the same tools: the prefix stayed the same.
    const offered = provider.requests.map((request) => names(request.tools));
    expect(offered[1]).toEqual(offered[0]);
    expect(offered[2]).toEqual(offered[0]);
    expect(offered[0]).not.toContain("fresh_tool");
    // The server announced the change; the array follows it.
    await until(() => tools.some((tool) => tool.spec.name === "fresh_tool"));
    await agent.ask("Again.", { tools });
    expect(names(provider.requests[3].tools)).toContain("fresh_tool");
    const fresh = tools.find((tool) => tool.spec.name === "fresh_tool") as Tool;
    await expect(fresh.execute({})).resolves.toBe("fresh_tool works");
  });

  it("a server that dies mid-call gives the model a typed tool error, and the run continues", async () => {
    const tools = await mcpTools(connection.client, { include: ["crash"] });
    const events: RunEvent[] = [];
    const { provider, agent } = agentWith([{ toolCalls: [{ name: "crash", input: {} }] }, "The server is gone; answering without it."], {
      onEvent: (event) => events.push(event),
    });
    await expect(agent.ask("Crash it.", { tools })).resolves.toBe("The server is gone; answering without it.");
    const [result] = toolResults(provider.requests[1]);
    expect(result).toMatchObject({ isError: true });
    expect(String(result.content)).toContain("MCP tool 'crash' could not be called");
    expect(events.find((event) => event.type === "tool-result")).toMatchObject({ name: "crash", isError: true });
  });
});

describe("mcpTools typed errors", () => {
  it("McpToolError carries the tool name and whether the server reported the error or the call failed", async () => {
    const connection = await overStdio();
    try {
      const [broken] = await mcpTools(connection.client, { include: ["broken"] });
      const error = await broken.execute({}).catch((caught: unknown) => caught);
      expect(McpToolError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ name: "McpToolError", toolName: "broken", reason: "result" });
    } finally {
      await connection.close();
    }
  });

  /** A client-shaped object whose listTools answers what `lists` gives, call after call. */
  function fakeClient(lists: (() => unknown)[]) {
    let handler: (() => void) | undefined;
    let listed = 0;
    const client = {
      listTools: async () => lists[Math.min(listed++, lists.length - 1)]!(),
      callTool: async () => ({ content: [] }),
      setNotificationHandler: (_schema: never, notified: () => void) => {
        handler = notified;
      },
    };
    return { client: client as never, notify: () => handler!(), listings: () => listed };
  }

  it("a tool name model APIs refuse is skipped with a warning naming it (the others stay), and exclude leaves it out without one", async () => {
    const { client } = fakeClient([() => ({ tools: [{ name: "files.read", inputSchema: { type: "object" } }, { name: "ok", inputSchema: { type: "object" } }] })]);
    const warnings: string[] = [];
    const onWarning = (message: string) => warnings.push(message);
    await expect(mcpTools(client, { onWarning })).resolves.toHaveLength(1);
    expect(warnings.filter((message) => message.includes('skipped the MCP tool named "files.read"'))).toHaveLength(1);
    await expect(mcpTools(client, { exclude: ["files.read"], onWarning })).resolves.toHaveLength(1);
    expect(warnings.filter((message) => message.includes("files.read"))).toHaveLength(1);
  });

  it("when fetching a changed list fails, the previous list stays", async () => {
    const fake = fakeClient([
      () => ({ tools: [{ name: "first", inputSchema: { type: "object" } }] }),
      () => {
        throw new Error("server busy");
      },
    ]);
    const tools = await mcpTools(fake.client);
    fake.notify();
    await until(() => fake.listings() === 2);
    await new Promise((resolve) => setImmediate(resolve));
    expect(tools.map((tool) => tool.spec.name)).toEqual(["first"]);
  });

  it("a client that is not an MCP client is a TypeError saying what to pass", async () => {
    await expect(mcpTools({} as never)).rejects.toThrow("client must be a connected MCP Client of @modelcontextprotocol/sdk");
  });
});
