import { Runtime } from "../runtime/runtime";
import { InMemorySessionStore } from "@rein/session";
import { SessionNodeWriter } from "@rein/session";
import { Chat, lookupThenAnswer } from "../session/__fixtures__/chat-agent";
import { Context } from "./context";


describe("one writer per (store, session) in a process", () => {
  it("Contexts made one after another on one session (A, A, B, A) continue one conversation: one chain, distinct seqs, every call sees every earlier one", async () => {
    const store = new InMemorySessionStore();
    const runtime = new Runtime({ provider: lookupThenAnswer() });
    const a = Context.forSession(store, "chat");
    const b = Context.forSession(store, "chat");
    const answers: string[] = [];
    for (const [context, text] of [
      [a, "one"],
      [a, "two"],
      [b, "three"],
      [a, "four"],
    ] as const) {
      answers.push(await new Chat({ runtime, context }).say(text));
    }
    // Each earlier call adds its question, the tool call, the tool result and the answer.
    expect(answers).toEqual(["answer after 3 messages", "answer after 7 messages", "answer after 11 messages", "answer after 15 messages"]);
    const nodes = store.readNodes("chat");
    expect(new Set(nodes.map((node) => node.seq)).size).toBe(nodes.length);
    const calls = nodes.filter((node) => node.caller === null);
    expect(calls.map((node) => (node.input as string[])[0])).toEqual(["one", "two", "three", "four"]);
    calls.forEach((call, index) => expect(call.predecessor).toBe(index === 0 ? null : calls[index - 1]!.id));
    expect(a.store).toBe(b.store);
  });

  it("Context.forSession and new Context({ store: new SessionNodeWriter(store, id) }) share the session's writer", async () => {
    const store = new InMemorySessionStore();
    store.createSession("chat", {});
    const explicit = new Context({}, { store: new SessionNodeWriter(store, "chat") });
    const perRequest = Context.forSession(store, "chat");
    expect(perRequest.store).toBe(explicit.store);
    const runtime = new Runtime({ provider: lookupThenAnswer() });
    await new Chat({ runtime, context: explicit }).say("one");
    await expect(new Chat({ runtime, context: perRequest }).say("two")).resolves.toBe("answer after 7 messages");
    // Another session of the store, or another store, has a writer of its own.
    expect(Context.forSession(store, "other").store).not.toBe(explicit.store);
    expect(Context.forSession(new InMemorySessionStore(), "chat").store).not.toBe(explicit.store);
  });

  it("forSession uses a session another process (or store on the same file) created after it checked", () => {
    const store = new InMemorySessionStore();
    const original = store.hasSession.bind(store);
    // The check says "absent", then someone else creates the session first.
    jest.spyOn(store, "hasSession").mockImplementationOnce((id: string) => {
      store.createSession(id, { title: "made elsewhere" });
      return false;
    });
    const context = Context.forSession(store, "race");
    expect(context.sessionId).toBe("race");
    expect(original("race")).toBe(true);
    expect(store.getSession("race").title).toBe("made elsewhere");
  });
});
