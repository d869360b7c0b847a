/**
 * A SessionNodeWriter and an agent run recording through PostgresSessionStore:
 * what the runtime writes arrives, chained, and a second Context on the same
 * session continues from the head the first committed.
 */
import { Context, Runtime, SessionNodeWriter } from "@rein/core";
import { Chat, lookupThenAnswer } from "../../core/src/session/__fixtures__/chat-agent";
import { PostgresSessionStore } from "./postgres-session-store";
import { freshSchemaName, startEmbeddedPostgres, type EmbeddedPostgresServer } from "./__fixtures__/embedded-postgres";

let server: EmbeddedPostgresServer | undefined;
beforeAll(async () => {
  server = await startEmbeddedPostgres();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

const open = (schema = freshSchemaName()): PostgresSessionStore =>
  new PostgresSessionStore({ connectionString: server!.connectionString, schema, shutdownFlush: false });

describe("an agent run recorded in PostgreSQL", () => {
  it("records each call's code node, model requests and tool call, chained, and completes them", async () => {
    const store = open();
    try {
      store.createSession("chat", { agentId: "Chat" });
      const writer = new SessionNodeWriter(store, "chat");
      const chat = new Chat({ runtime: new Runtime({ provider: lookupThenAnswer() }), context: new Context({}, { store: writer }) });
      await expect(chat.say("first")).resolves.toMatch(/^answer after/);
      await expect(chat.say("second")).resolves.toMatch(/^answer after/);
      writer.flush();
      const nodes = store.readNodes("chat");
      const ids = new Set(nodes.map((node) => node.id));
      const calls = nodes.filter((node) => node.caller === null);
      expect(calls.map((node) => node.name)).toEqual(["Chat.say", "Chat.say"]);
      expect(calls[1]!.predecessor).toBe(calls[0]!.id);
      expect(store.head("chat")).toBe(calls[1]!.id);
      for (const node of nodes) {
        if (node.caller !== null) expect(ids.has(node.caller)).toBe(true);
        if (node.predecessor !== null) expect(ids.has(node.predecessor)).toBe(true);
      }
      expect(nodes.filter((node) => node.role === "llm").length).toBeGreaterThanOrEqual(4);
      expect(nodes.some((node) => node.name.endsWith("lookup"))).toBe(true);
      expect(calls.every((node) => node.metadata["status"] === "completed")).toBe(true);
      // History for the next request drawn from the ancestry alone: every node of both calls.
      expect(store.readAncestry("chat", calls[1]!.id).map((node) => node.id)).toEqual(nodes.map((node) => node.id));
      expect(store.readAncestry("chat", calls[1]!.id, { turns: 1 }).every((node) => node.seq >= calls[1]!.seq)).toBe(true);
    } finally {
      store.close();
    }
  });

  it("a second store (another process) on the same schema continues the conversation from the committed head", async () => {
    const schema = freshSchemaName();
    const one = open(schema);
    const two = open(schema);
    try {
      one.createSession("chat");
      const runtime = new Runtime({ provider: lookupThenAnswer() });
      await new Chat({ runtime, context: Context.forSession(one, "chat") }).say("q1");
      one.flush();
      const [first] = one.readNodes("chat").filter((node) => node.caller === null);
      await new Chat({ runtime, context: Context.forSession(two, "chat") }).say("q2");
      two.flush();
      const calls = one.readNodes("chat").filter((node) => node.caller === null);
      expect(calls).toHaveLength(2);
      expect(calls[1]!.predecessor).toBe(first!.id);
      const seqs = one.readNodes("chat").map((node) => node.seq);
      expect(new Set(seqs).size).toBe(seqs.length);
    } finally {
      one.close();
      two.close();
    }
  });

  it("two stores (two processes) taking turns, each writer read ahead as a server does: after its first turn each reads only the other's latest turns, and every request carries the whole conversation", async () => {
    const schema = freshSchemaName();
    // On the asynchronous path, as `rein serve` opens its store.
    const stores = [0, 1].map(() => new PostgresSessionStore({ connectionString: server!.connectionString, schema, shutdownFlush: false, asyncWrites: true }));
    try {
      stores[0]!.createSession("chat");
      const writers = await Promise.all(stores.map((store) => SessionNodeWriter.open(store, "chat")));
      const runtime = new Runtime({ provider: lookupThenAnswer() });
      const chats = writers.map((writer) => new Chat({ runtime, context: Context.forSession(writer, "chat") }));
      const turn = async (index: number): Promise<string> => {
        await writers[index % 2]!.readAhead();
        const answer = await chats[index % 2]!.say(`q${index}`);
        await writers[index % 2]!.flushAsync();
        return answer;
      };
      await turn(0);
      await turn(1);
      const reads = stores.flatMap((store) => [jest.spyOn(store, "readAncestry"), jest.spyOn(store.asyncReads!, "readAncestry")]);
      for (let index = 2; index < 12; index++) {
        // Each turn adds four messages (the question, the lookup, its result, the answer): every earlier turn is sent.
        await expect(turn(index)).resolves.toBe(`answer after ${4 * index + 3} messages`);
      }
      const sizes = await Promise.all(reads.flatMap((read) => read.mock.results.map(async (result) => ((await result.value) as unknown[]).length)));
      expect(sizes.length).toBeGreaterThan(0);
      // The other's last turn and the one before (four nodes each), where the ancestry is 40 nodes and more by now.
      expect(Math.max(...sizes)).toBeLessThanOrEqual(8);
      expect(stores[0]!.readAncestry("chat", stores[0]!.head("chat")!).length).toBeGreaterThanOrEqual(48);
    } finally {
      for (const store of stores) store.close();
    }
  });

  it("close commits a writer's pending batch before the connection ends", () => {
    const schema = freshSchemaName();
    const store = open(schema);
    store.createSession("s");
    const writer = new SessionNodeWriter(store, "s", { batching: "manual" });
    writer.append({ id: "a", role: "user", name: "user", input: "kept" });
    store.close();
    const reopened = open(schema);
    try {
      expect(reopened.readNodes("s").map((node) => node.input)).toEqual(["kept"]);
    } finally {
      reopened.close();
    }
  });
});
