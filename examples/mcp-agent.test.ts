import { ScriptedProvider } from "@rein/core";
import { runMcpAgent } from "./mcp-agent";

describe("examples/mcp-agent", () => {
  it("uses the notes server's tools through mcpTools and prints the run's span tree", async () => {
    const lines: string[] = [];
    const { answer, notes, spans } = await runMcpAgent({ print: (line) => lines.push(line) });
    expect(answer).toBe("Saved: your notebook now says the launch moved to Tuesday.");
    // The tool call reached the real MCP server: it holds the note.
    expect(notes).toBe("1. The launch moved to Tuesday.");
    expect(lines[0]).toBe("MCP tools: add_note, list_notes");
    expect(spans.map((line) => line.split(/(?<=\S) {2}/)[0])).toEqual([
      "invoke_agent NoteTaker",
      "  chat scripted",
      "  execute_tool add_note",
      "  chat scripted",
      "  execute_tool list_notes",
      "  chat scripted",
    ]);
    expect(spans[1]).toContain("usage.input_tokens=10");
  });

  it("runs with another provider", async () => {
    const model = new ScriptedProvider(["No tools needed."]);
    const { answer, spans } = await runMcpAgent({ provider: model, print: () => undefined });
    expect(answer).toBe("No tools needed.");
    // The model was offered the server's tools, under their own names and schemas.
    expect(model.requests[0].tools.map((tool) => tool.name)).toEqual(["add_note", "list_notes"]);
    expect(model.requests[0].tools[0].parameters).toMatchObject({ required: ["text"] });
    expect(spans).toHaveLength(2);
  });
});
