import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import type { ModelRequest } from "../model/model-provider";
import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "../runtime/runtime";
import type { SessionNode } from "@rein/session";
import { SessionStore } from "@rein/session";
import { SessionNodeWriter } from "@rein/session";

/**
 * Issue 10 item 9: history for the next request is read along the head's
 * ancestry, so a long session is never loaded whole, and `renderRange.turns`
 * bounds what is read to the last turns.
 */

/** Answers with the questions ("q…") of every user turn it was sent. */
function echoQuestions(): ScriptedProvider {
  return new ScriptedProvider(
    [
      (request: ModelRequest) =>
        request.messages
          .filter((message) => message.role === "user")
          .flatMap((message) => message.content)
          .map((block) => (block.type === "text" ? block.text : ""))
          .filter((text) => /^q\d+$/.test(text))
          .join(","),
    ],
    { whenExhausted: "repeat-last" },
  );
}

class Chat extends Agent {
  static methodOptions = { recent: { renderRange: { turns: 3 } } };
  async say(text: string): Promise<string> {
    return this.ask(text);
  }
  async recent(text: string): Promise<string> {
    return this.ask(text);
  }
}

/** `turns` top-level calls, each with one completed llm node asking "q<i>", and a side branch per turn. */
function longSession(store: SessionStore, turns: number): void {
  store.createSession("long");
  const nodes: SessionNode[] = [];
  let previous: string | null = null;
  let seq = 0;
  for (let turn = 0; turn < turns; turn++) {
    const call = `c${turn}`;
    const base = { createdAt: turn, input: undefined, output: undefined, metadata: { status: "completed" } };
    nodes.push({ ...base, id: call, seq: seq++, role: "code", name: "Chat.say", caller: null, predecessor: previous });
    nodes.push({
      ...base,
      id: `${call}.l`,
      seq: seq++,
      role: "llm",
      name: "model",
      caller: call,
      predecessor: null,
      input: { content: [{ type: "text", text: `q${turn}` }] },
      output: { content: [{ type: "text", text: `a${turn}` }] },
    });
    // A branch off this turn that no later request may see.
    nodes.push({ ...base, id: `${call}.x`, seq: seq++, role: "code", name: "Chat.say", caller: null, predecessor: call });
    nodes.push({ ...base, id: `${call}.x.l`, seq: seq++, role: "llm", name: "model", caller: `${call}.x`, predecessor: null, input: { content: [{ type: "text", text: `q-branch${turn}` }] } });
    previous = call;
  }
  store.commit("long", nodes.map((node) => ({ kind: "append" as const, node })));
  store.setHead("long", previous);
}

describe("a long session is never loaded whole", () => {
  let directory: string;
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), "rein-large-"));
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  it("history follows the head's ancestry (no side branch) and the store never reads the whole session", async () => {
    const store = new SessionStore({ path: join(directory, "s.db"), shutdownFlush: false });
    try {
      longSession(store, 300);
      const whole = jest.spyOn(store, "readNodes");
      const chat = new Chat({ runtime: new Runtime({ provider: echoQuestions() }), context: Context.forSession(store, "long") });
      const answer = await chat.say("q300");
      expect(answer.split(",")).toEqual([...Array.from({ length: 300 }, (_, turn) => `q${turn}`), "q300"]);
      expect(await chat.say("q301")).toMatch(/,q299,q300,q301$/);
      expect(whole).not.toHaveBeenCalled();
    } finally {
      store.close();
    }
  });

  it("renderRange.turns: requests in the method see (and the store reads) only the last turns", async () => {
    const store = new SessionStore({ path: join(directory, "s.db"), shutdownFlush: false });
    try {
      longSession(store, 300);
      const ancestry = jest.spyOn(store, "readAncestry");
      const chat = new Chat({ runtime: new Runtime({ provider: echoQuestions() }), context: Context.forSession(store, "long") });
      // The current turn and the two before it.
      expect(await chat.recent("q300")).toBe("q298,q299,q300");
      const read = ancestry.mock.results.reduce((sum, result) => sum + (result.value as SessionNode[]).length, 0);
      expect(read).toBeLessThan(20);
      expect(await chat.recent("q301")).toBe("q299,q300,q301");
    } finally {
      store.close();
    }
  });

  it("two processes taking turns on one long session: each reads only the turns the other wrote since its last, not the whole ancestry again", async () => {
    // Two stores on one file, as two processes (or machines on one PostgreSQL database) serving one conversation.
    const first = new SessionStore({ path: join(directory, "s.db"), shutdownFlush: false });
    const second = new SessionStore({ path: join(directory, "s.db"), shutdownFlush: false });
    try {
      longSession(first, 300);
      const chats = [first, second].map((store) => new Chat({ runtime: new Runtime({ provider: echoQuestions() }), context: Context.forSession(store, "long") }));
      // Each reads the session once, on its first turn.
      await chats[0]!.say("q300");
      await chats[1]!.say("q301");
      const reads = [first, second].map((store) => jest.spyOn(store, "readAncestry"));
      for (let turn = 302; turn < 310; turn++) {
        const answer = await chats[turn % 2]!.say(`q${turn}`);
        // Whole history: every question of the 300 stored turns and of both processes' turns since, in order.
        expect(answer.split(",")).toEqual(Array.from({ length: turn + 1 }, (_, index) => `q${index}`));
      }
      const nodesRead = reads.flatMap((read) => read.mock.results.map((result) => (result.value as SessionNode[]).length));
      // The other process's last turn (its call and llm node) and the turn before, per turn: a few nodes, where
      // reading the ancestry again is 600 or more each time.
      expect(nodesRead.length).toBeGreaterThan(0);
      expect(Math.max(...nodesRead)).toBeLessThan(20);
    } finally {
      first.close();
      second.close();
    }
  });

  it("a writer that has seen the session reads nothing for the next request; its window is bounded and read again past its bound", async () => {
    const store = new SessionStore({ path: join(directory, "s.db"), shutdownFlush: false });
    try {
      longSession(store, 10);
      const chat = new Chat({ runtime: new Runtime({ provider: echoQuestions() }), context: Context.forSession(store, "long") });
      await chat.say("q10");
      const ancestry = jest.spyOn(store, "readAncestry");
      await chat.say("q11");
      expect(ancestry).not.toHaveBeenCalled();
      // Past its bound (at least 10,000 nodes) the window is read again along the ancestry.
      const writer = new SessionNodeWriter(store, "long");
      const head = writer.head!;
      for (let index = 0; index < 10_001; index++) writer.append({ id: `n${index}`, role: "code", name: "noise", caller: head });
      await chat.say("q12");
      expect(ancestry).toHaveBeenCalled();
    } finally {
      store.close();
    }
  });
});
