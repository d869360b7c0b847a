/**
 * An llm node records the request as sent beside the turn's new content:
 * the user turn as the model got it (situational guidance first), the
 * system prompt and how much history came before — so a person reading the
 * graph (the Inspector) sees what the model saw, not only what was new.
 */
import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import type { ContentBlock } from "../model/content";
import { ScriptedProvider } from "../model/scripted-provider";
import { OverloadedError } from "@rein/guard";
import { InMemorySessionStore } from "@rein/session";
import { Runtime } from "./runtime";

class Librarian extends Agent {
  static instructions = "You are a careful librarian.";
  static methodOptions = { shelve: { tool: true, description: "Shelve a book." } };
  shelve(title: string): string {
    return `shelved ${title}`;
  }
  async sort(task: string): Promise<string> {
    return this.ask(task);
  }
}

interface RecordedInput {
  content: ContentBlock[];
  sent?: ContentBlock[];
  system?: string;
  history: number;
}

const textOf = (block: ContentBlock | undefined) => (block?.type === "text" ? block.text : "");

describe("the llm node records the request as sent", () => {
  it("the user turn as sent (situational guidance first), the system prompt and the history count, beside the new content", async () => {
    const store = new InMemorySessionStore();
    const provider = new ScriptedProvider([{ toolCalls: [{ name: "shelve", input: { title: "Dune" } }] }, "All shelved."]);
    const librarian = new Librarian({ runtime: new Runtime({ provider }), context: Context.forSession(store, "library") });
    expect(await librarian.sort("Shelve Dune.")).toBe("All shelved.");

    const llm = store.readNodes("library").filter((node) => node.role === "llm");
    expect(llm).toHaveLength(2);
    const [first, second] = llm.map((node) => node.input as RecordedInput);
    // The new content is what it was (history is rebuilt from it): the task alone.
    expect(first!.content).toEqual([{ type: "text", text: "Shelve Dune." }]);
    // As sent: the situational guidance of Librarian.sort first, then the task — what the provider got.
    expect(textOf(first!.sent?.[0])).toContain("You are running INSIDE the function `Librarian.sort`");
    expect(first!.sent?.[first!.sent.length - 1]).toEqual({ type: "text", text: "Shelve Dune." });
    expect(first!.sent).toEqual(provider.requests[0]!.messages[provider.requests[0]!.messages.length - 1]!.content);
    expect(first!.system).toBe(provider.requests[0]!.system);
    expect(first!.system).toContain("You are a careful librarian.");
    expect(first!.history).toBe(0);
    // The second request: its new content is the tool result; before it, the first user turn and the model's call.
    expect(second!.content).toEqual([expect.objectContaining({ type: "tool_result", content: "shelved Dune" })]);
    expect(second!.history).toBe(2);
    expect(second!.system).toBe(first!.system);
  });

  it("a later turn's history is rebuilt from the new content only: the guidance is not sent twice", async () => {
    const store = new InMemorySessionStore();
    const provider = new ScriptedProvider(["first answer", "second answer"]);
    const context = Context.forSession(store, "two-turns");
    await new Librarian({ runtime: new Runtime({ provider }), context }).sort("one");
    await new Librarian({ runtime: new Runtime({ provider }), context }).sort("two");
    const sent = JSON.stringify(provider.requests[1]!.messages);
    expect(sent.split("You are running INSIDE the function").length - 1).toBe(1);
    const last = store.readNodes("two-turns").filter((node) => node.role === "llm").pop()!.input as RecordedInput;
    expect(last.history).toBe(2);
  });
});

describe("the llm node of a request that failed after its provider counted it", () => {
  it("carries the usage the run was charged for it: what the provider reported before failing", async () => {
    const store = new InMemorySessionStore();
    const reportedUsage = { inputTokens: 1_200, outputTokens: 40 };
    const provider = new ScriptedProvider(["unused"]);
    provider.complete = () => Promise.reject(new OverloadedError("overloaded after message_start", { provider: "scripted", reportedUsage }));
    const librarian = new Librarian({ runtime: new Runtime({ provider }), context: Context.forSession(store, "failed") });
    await expect(librarian.sort("Shelve Dune.")).rejects.toBeInstanceOf(OverloadedError);
    const [llm] = store.readNodes("failed").filter((node) => node.role === "llm");
    expect(llm?.metadata).toMatchObject({ status: "error", usage: reportedUsage });
    expect(String((llm!.metadata as { error?: unknown }).error)).toContain("overloaded after message_start");
  });

  it("carries no usage when its provider reported none", async () => {
    const store = new InMemorySessionStore();
    const provider = new ScriptedProvider(["unused"]);
    provider.complete = () => Promise.reject(new OverloadedError("overloaded", { provider: "scripted" }));
    const librarian = new Librarian({ runtime: new Runtime({ provider }), context: Context.forSession(store, "unreported") });
    await expect(librarian.sort("Shelve Dune.")).rejects.toBeInstanceOf(OverloadedError);
    const [llm] = store.readNodes("unreported").filter((node) => node.role === "llm");
    expect(llm?.metadata).toMatchObject({ status: "error" });
    expect(llm?.metadata).not.toHaveProperty("usage");
  });
});
