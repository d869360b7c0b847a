import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { defaultAnthropicModel, RecursionError, ScriptedProvider } from "rein";
import { runawayModel, runRunawayDemo, WATCH_COMMAND } from "./runaway-agent";

async function runDemo(options: Parameters<typeof runRunawayDemo>[0]) {
  const lines: string[] = [];
  const result = await runRunawayDemo({ ...options, print: (line) => lines.push(line) });
  return { result, output: lines.join("\n") };
}

/** A stand-in for the Anthropic Messages API on 127.0.0.1, answering with `replies` in order. */
/** One Messages API answer as its server-sent events (one content block). */
function messagesSse(message: { stop_reason: string; usage: object }, block: { type: string; text?: string; id?: string; name?: string; input?: unknown }): string {
  const event = (type: string, data: object): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const start = block.type === "text" ? { type: "text", text: "" } : { type: "tool_use", id: block.id, name: block.name, input: {} };
  const delta = block.type === "text" ? { type: "text_delta", text: block.text } : { type: "input_json_delta", partial_json: JSON.stringify(block.input) };
  return (
    event("message_start", { message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 50, output_tokens: 0 } } }) +
    event("content_block_start", { index: 0, content_block: start }) +
    event("content_block_delta", { index: 0, delta }) +
    event("content_block_stop", { index: 0 }) +
    event("message_delta", { delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: 10 } }) +
    event("message_stop", {})
  );
}

async function withMessagesServer<T>(replies: readonly object[], run: (url: string, bodies: unknown[]) => Promise<T>): Promise<T> {
  const bodies: unknown[] = [];
  const queue = [...replies];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { stream?: boolean };
      bodies.push(body);
      const content = queue.shift();
      const message = {
        id: `msg_${bodies.length}`,
        type: "message",
        role: "assistant",
        model: defaultAnthropicModel,
        content: [content],
        stop_reason: content !== undefined && "name" in content ? "tool_use" : "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 50, output_tokens: 10 },
      };
      if (content === undefined || body.stream !== true) {
        response.writeHead(content === undefined ? 500 : 200, { "content-type": "application/json" });
        response.end(JSON.stringify(message));
        return;
      }
      // The demo listens to events, so the runtime streams: answer in the Messages API's SSE format.
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(messagesSse(message, content as { type: string; text?: string; id?: string; name?: string; input?: unknown }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    return await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe("examples/runaway-agent", () => {
  it("without a key it says so and runs on the scripted runaway model: stopped by RecursionError at depth 5 in ≤ 7 requests", async () => {
    const { result, output } = await runDemo({ env: {} });

    expect(result.mode).toBe("scripted");
    expect(output).toContain("No API key found");
    expect(output).toContain("Model: runaway-model (provider: scripted)");

    expect(result.error).toBeInstanceOf(RecursionError);
    const error = result.error as RecursionError;
    expect(error.limit).toBe(5);
    expect(error.message).toBe("agentic function WikiAgent.wiki_agent exceeded max nesting depth 5 — possible runaway recursion");
    expect(output).toContain(`RecursionError: ${error.message}`);

    // Each request shows as it happens, nesting one level deeper each time, never past 5.
    expect(output).toContain("→ model request 1 to runaway-model, inside WikiAgent.wiki_agent at depth 1");
    expect(output).toContain("→ model request 5 to runaway-model, inside WikiAgent.wiki_agent at depth 5");
    expect(output).not.toContain("at depth 6");

    // The chain at the point the ceiling stopped it: five frames of the same function.
    expect(result.chainAtRefusal).toEqual(Array(5).fill("WikiAgent.wiki_agent"));
    expect(output).toContain(`Call chain when it refused the call (5 frames):\n  ${Array(5).fill("WikiAgent.wiki_agent").join(" → ")}`);

    // The model saw the ceiling once, as a tool error, before the second refusal ended the run.
    expect(result.refusalsSeen).toBe(1);
    expect(output.match(/the model now sees the tool error: "Refused: agentic function WikiAgent\.wiki_agent/g)).toHaveLength(1);
    expect(output).toContain("a second refusal in this run: the whole run ends");

    expect(result.requests).toBeLessThanOrEqual(7);
    expect(output).toContain(`Model requests: ${result.requests} (the model saw 1 refusal(s) as tool errors; ceiling 5)`);

    expect(output).toContain("Session graph (Mermaid");
    expect(output).toContain("flowchart TD");
    expect(output).toContain('["code: WikiAgent.wiki_agent (error)"]');
    expect(output).toContain('["llm: runaway-model (completed)"]');
    expect(result.graph.startsWith("flowchart TD")).toBe(true);
  });

  it("given the runaway model explicitly, it says nothing about keys and ends the same way", async () => {
    const { result, output } = await runDemo({ provider: runawayModel() });
    expect(result.mode).toBe("model");
    expect(output).not.toContain("No API key found");
    expect(result.error).toBeInstanceOf(RecursionError);
  });

  it("a model that follows the guidance uses the lower-level tools and the demo ends cleanly with its answer", async () => {
    const wellBehaved = new ScriptedProvider(
      [
        { toolCalls: [{ name: "search_wiki", input: { query: "recursion" } }] },
        { toolCalls: [{ name: "read_page", input: { title: "Recursion" } }] },
        "Recursion defines something in terms of itself; it needs a base case to stop.",
      ],
      { modelId: "well-behaved-model" },
    );
    const { result, output } = await runDemo({ provider: wellBehaved });

    expect(result.error).toBeUndefined();
    expect(result.answer).toBe("Recursion defines something in terms of itself; it needs a base case to stop.");
    expect(output).toContain("Answer:\nRecursion defines something in terms of itself; it needs a base case to stop.");
    expect(output).toContain("no guard had to step in");
    expect(output).toContain('model calls read_page({"title":"Recursion"})');
    expect(result.requests).toBe(3);
    expect(output).toContain("Model requests: 3");
    expect(output).toContain("flowchart TD");
    // The lower-level tools got the canned wiki text back.
    const toolResults = wellBehaved.requests[2].messages.at(-1)!.content;
    expect(toolResults[0]).toMatchObject({ type: "tool_result" });
    expect(toolResults[0]).not.toHaveProperty("isError", true);
    expect(JSON.stringify(toolResults[0])).toContain("A recursive function calls itself");
  });

  it("with ANTHROPIC_API_KEY set it runs on the provider createProvider picks and names its model", async () => {
    const replies = [
      { type: "tool_use", id: "toolu_01", name: "search_wiki", input: { query: "recursion" } },
      { type: "text", text: "Recursion is self-reference that stops at a base case." },
    ];
    const { result, output, bodies } = await withMessagesServer(replies, async (url, bodies) => ({
      ...(await runDemo({ env: { ANTHROPIC_API_KEY: "dummy-key", ANTHROPIC_BASE_URL: url } })),
      bodies,
    }));

    expect(result.mode).toBe("model");
    expect(output).not.toContain("No API key found");
    expect(output).toContain(`Model: ${defaultAnthropicModel} (provider: anthropic)`);
    expect(result.answer).toBe("Recursion is self-reference that stops at a base case.");
    expect(output).toContain("no guard had to step in");
    expect(bodies).toHaveLength(2);
    const tools = (bodies[0] as { tools: { name: string }[] }).tools.map((tool) => tool.name);
    expect(tools).toEqual(["wiki_agent", "search_wiki", "read_page"]);
  });
});

describe("examples/runaway-agent with the rein CLI", () => {
  it("the demo ends with the command to watch the same run live, and that command runs it with the reach status line", async () => {
    const { output } = await runDemo({});
    expect(output.trimEnd().endsWith(WATCH_COMMAND)).toBe(true);
    const root = join(__dirname, "..");
    const args = WATCH_COMMAND.replace(/^TSX_TSCONFIG_PATH=\S+ node /, "").split(" ");
    const watched = spawnSync(process.execPath, args, {
      cwd: root,
      env: { ...process.env, TSX_TSCONFIG_PATH: join(root, "tsconfig.test.json"), ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "", OPENAI_BASE_URL: "" },
      encoding: "utf8",
      timeout: 60_000,
    });
    const text = `${watched.stdout}${watched.stderr}`;
    expect(text).toContain("[REACH] Depth 1/5");
    expect(text).toMatch(/RecursionError: agentic function WikiAgent.wiki_agent exceeded max nesting depth 5/);
  }, 60_000);
});
