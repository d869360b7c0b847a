import { PassThrough } from "node:stream";
import { ScriptedProvider } from "rein";
import { rememberingModel, runStreamingChat } from "./streaming-chat";

async function chat(lines: string[], provider = rememberingModel()): Promise<{ turns: number; output: string; chunks: string[] }> {
  const input = new PassThrough();
  const output = new PassThrough();
  const chunks: string[] = [];
  output.on("data", (chunk: Buffer) => chunks.push(chunk.toString()));
  const done = runStreamingChat({ input, output, provider });
  input.end(lines.map((line) => `${line}\n`).join(""));
  const turns = await done;
  return { turns, output: chunks.join(""), chunks };
}

describe("examples/streaming-chat", () => {
  it("streams each answer as it is written, and the ChatAgent remembers the conversation", async () => {
    const { turns, output, chunks } = await chat(["I'm Ada.", "What did I say first?", "/quit", "never read"]);
    expect(turns).toBe(2);
    expect(output).toContain(`Nice to meet you! You said: "I'm Ada.".`);
    expect(output).toContain(`You said: "What did I say first?". The first thing you told me was: "I'm Ada.".`);
    // Written in pieces as the model streamed it, not in one write.
    expect(chunks.filter((chunk) => "Nice to meet you!".includes(chunk) && chunk.length > 0).length).toBeGreaterThan(2);
    expect(output).toMatch(/\(1 request, \d+ in \/ \d+ out tokens\)/);
    expect(output.trimEnd().endsWith("Bye.")).toBe(true);
  });

  it("a failing turn is reported and the chat goes on", async () => {
    const flaky = new ScriptedProvider(
      [
        () => {
          throw new Error("provider down");
        },
        "recovered",
      ],
      { whenExhausted: "repeat-last" },
    );
    const { turns, output } = await chat(["first", "second"], flaky);
    expect(turns).toBe(2);
    expect(output).toMatch(/\[error: .*provider down/);
    expect(output).toContain("recovered");
  });
});
