import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import type { ModelRequest } from "../model/model-provider";
import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "../runtime/runtime";
import { InMemorySessionStore } from "@rein/session";
import { SessionNodeWriter } from "@rein/session";

/**
 * Several processes on one session, simulated in one: each "process" has a
 * writer of its own (`shared: false` bypasses the per-process registry, as
 * a separate process would), all on one store. The store side (real
 * processes on one SQLite file) is tested with the SQLite store.
 */

/** Answers with the texts of every user turn it was sent, so a test sees what history reached the model. */
function echoUserTurns(): ScriptedProvider {
  return new ScriptedProvider(
    [
      (request: ModelRequest) =>
        request.messages
          .filter((message) => message.role === "user")
          .flatMap((message) => message.content)
          .filter((block) => block.type === "text")
          .map((block) => (block as { text: string }).text)
          .filter((text) => text.startsWith("q"))
          .join(","),
    ],
    { whenExhausted: "repeat-last" },
  );
}

class Chat extends Agent {
  async say(text: string): Promise<string> {
    return this.ask(text);
  }
}

/** A "process": its own writer on the shared store, and an agent using it. */
function process(store: InMemorySessionStore, runtime: Runtime): { writer: SessionNodeWriter; chat: Chat } {
  const writer = new SessionNodeWriter(store, "chat", { shared: false });
  return { writer, chat: new Chat({ runtime, context: new Context({}, { store: writer }) }) };
}

const topLevel = (store: InMemorySessionStore) => store.readNodes("chat").filter((node) => node.caller === null);

describe("several writers (processes) on one session", () => {
  it("sequential calls from two processes continue one conversation: each starts from the head committed in the store", async () => {
    const store = new InMemorySessionStore();
    store.createSession("chat", {});
    const runtime = new Runtime({ provider: echoUserTurns() });
    const one = process(store, runtime);
    const two = process(store, runtime);
    const answers: string[] = [];
    for (const [{ chat }, text] of [
      [one, "q1"],
      [two, "q2"],
      [one, "q3"],
      [one, "q4"],
      [two, "q5"],
    ] as const) {
      answers.push(await chat.say(text));
    }
    expect(answers).toEqual(["q1", "q1,q2", "q1,q2,q3", "q1,q2,q3,q4", "q1,q2,q3,q4,q5"]);
    const calls = topLevel(store);
    calls.forEach((call, index) => expect(call.predecessor).toBe(index === 0 ? null : calls[index - 1]!.id));
    const seqs = store.readNodes("chat").map((node) => node.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
  });

  it("two writers never give two nodes one seq; each writer's graph carries the seq the store gave, and its next proposal follows it", () => {
    const store = new InMemorySessionStore();
    store.createSession("chat", {});
    const one = new SessionNodeWriter(store, "chat", { batching: "manual", shared: false });
    const two = new SessionNodeWriter(store, "chat", { batching: "manual", shared: false });
    one.graph();
    two.graph();
    expect(one.append({ id: "a", role: "user", name: "user" }).seq).toBe(0);
    expect(two.append({ id: "b", role: "user", name: "user" }).seq).toBe(0);
    one.flush();
    two.flush();
    expect(store.readNodes("chat").map((node) => [node.id, node.seq])).toEqual([
      ["a", 0],
      ["b", 1],
    ]);
    expect(two.graph().get("b")!.seq).toBe(1);
    expect(two.append({ id: "c", role: "user", name: "user" }).seq).toBe(2);
  });

  it("calls started at once in two processes fork at the shared head; the next call continues from the head committed last", async () => {
    const store = new InMemorySessionStore();
    store.createSession("chat", {});
    const runtime = new Runtime({ provider: echoUserTurns() });
    const one = process(store, runtime);
    const two = process(store, runtime);
    await one.chat.say("q1");
    const [first, second] = await Promise.all([one.chat.say("q2"), two.chat.say("q3")]);
    // Neither saw the other: both continued from q1.
    expect([first, second]).toEqual(["q1,q2", "q1,q3"]);
    const [q1, q2, q3] = topLevel(store);
    expect([q2!.predecessor, q3!.predecessor]).toEqual([q1!.id, q1!.id]);
    expect(store.listBranches("chat").map((branch) => branch.tipId).sort()).toEqual([q2!.id, q3!.id].sort());
    const head = store.head("chat");
    await expect(one.chat.say("q4")).resolves.toBe(head === q2!.id ? "q1,q2,q4" : "q1,q3,q4");
  });

  it("a Context that pins headId continues from it, whatever another process did since", async () => {
    const store = new InMemorySessionStore();
    store.createSession("chat", {});
    const runtime = new Runtime({ provider: echoUserTurns() });
    const one = process(store, runtime);
    const two = process(store, runtime);
    await one.chat.say("q1");
    const [q1] = topLevel(store);
    await two.chat.say("q2");
    const pinned = new Chat({ runtime, context: new Context({}, { store: one.writer, headId: q1!.id }) });
    await expect(pinned.say("q3")).resolves.toBe("q1,q3");
    // The pinned call became the head; another process continues from it, and this one reads that call in.
    await expect(two.chat.say("q4")).resolves.toBe("q1,q3,q4");
    await expect(one.chat.say("q5")).resolves.toBe("q1,q3,q4,q5");
  });
});
