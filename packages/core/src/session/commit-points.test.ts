import { Context } from "../context/context";
import { Runtime } from "../runtime/runtime";
import { InMemorySessionStore } from "@rein/session";
import { SessionNodeWriter } from "@rein/session";
import { Chat, lookupThenAnswer } from "./__fixtures__/chat-agent";
import { FaultyStore, appendsInputWith } from "./__fixtures__/faulty-store";

/**
 * When the runtime commits (issue 10, recording cost): once per top-level
 * call or top-level run, before it returns — not once per model request
 * and per tool call — so a returned call is durable and a turn pays one
 * commit. Writes in between go in with the writer's batch when the event
 * loop turns.
 */
describe("commit points", () => {
  function chatOn(store: InMemorySessionStore): { chat: Chat; writer: SessionNodeWriter; commits: jest.SpyInstance } {
    store.createSession("s");
    const writer = new SessionNodeWriter(store, "s");
    const commits = jest.spyOn(store, "commit");
    const chat = new Chat({ runtime: new Runtime({ provider: lookupThenAnswer() }), context: new Context({}, { store: writer }) });
    return { chat, writer, commits };
  }

  it("a top-level call (2 model requests, 1 tool call) is committed whole, in one commit, before it returns", async () => {
    const store = new InMemorySessionStore();
    const { chat, writer, commits } = chatOn(store);
    await chat.say("one");
    // Checked before the event loop turns: nothing was left for a later batch.
    expect(writer.pending).toBe(0);
    expect(commits).toHaveBeenCalledTimes(1);
    expect(store.readNodes("s").map((node) => `${node.role}:${node.name}`)).toEqual(["code:Chat.say", "llm:scripted", "code:Chat.lookup", "llm:scripted"]);
    expect(store.readNodes("s")[0]!.metadata["status"]).toBe("completed");
  });

  it("agent.ask() outside any call: its nodes (each top-level) and its tool calls are committed in one commit before it resolves", async () => {
    const store = new InMemorySessionStore();
    const { chat, writer, commits } = chatOn(store);
    await chat.ask("one");
    expect(writer.pending).toBe(0);
    expect(commits).toHaveBeenCalledTimes(1);
    expect(store.readNodes("s").map((node) => node.role)).toEqual(["llm", "code", "llm"]);
  });

  it("agent.ask() outside any call fails with the storage error when its nodes cannot be committed", async () => {
    const store = new FaultyStore();
    store.createSession("s");
    const writer = new SessionNodeWriter(store, "s", { onCommitError: () => undefined });
    const chat = new Chat({ runtime: new Runtime({ provider: lookupThenAnswer() }), context: new Context({}, { store: writer }) });
    store.refuse = appendsInputWith("one");
    await expect(chat.ask("one")).rejects.toThrow(/disk full \(injected fault/);
    store.refuse = undefined;
    writer.flush();
    expect(store.readNodes("s").map((node) => node.role)).toEqual(["llm", "code", "llm"]);
    store.close();
  });
});
