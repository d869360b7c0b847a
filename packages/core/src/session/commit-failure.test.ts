import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import { Runtime } from "../runtime/runtime";
import { SESSION_COMMIT_FAILED_CHANNEL, type SessionCommitFailure } from "@rein/session";
import { SessionNodeWriter } from "@rein/session";
import { Chat, lookupThenAnswer } from "./__fixtures__/chat-agent";
import { FaultyStore, appendsInputWith } from "./__fixtures__/faulty-store";

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function until(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** What the commit-failed diagnostics channel published during a test. */
function channelMessages(): { messages: SessionCommitFailure[]; stop: () => void } {
  const messages: SessionCommitFailure[] = [];
  const listener = (message: unknown): void => {
    messages.push(message as SessionCommitFailure);
  };
  subscribe(SESSION_COMMIT_FAILED_CHANNEL, listener);
  return { messages, stop: () => unsubscribe(SESSION_COMMIT_FAILED_CHANNEL, listener) };
}

describe("a failed commit is contained", () => {
  it("the call whose nodes cannot be committed fails with the storage error; later calls return their own values; the kept nodes commit once the fault clears; reported once", async () => {
    const store = new FaultyStore();
    store.createSession("s");
    const reported: SessionCommitFailure[] = [];
    const published = channelMessages();
    const writer = new SessionNodeWriter(store, "s", { onCommitError: (failure) => reported.push(failure) });
    const chat = new Chat({ runtime: new Runtime({ provider: lookupThenAnswer() }), context: new Context({}, { store: writer }) });
    try {
      await expect(chat.say("one")).resolves.toBe("answer after 3 messages");
      // The store refuses every batch holding the second call's nodes, for as long as `refuse` is set.
      store.refuse = appendsInputWith("two");
      await expect(chat.say("two")).rejects.toThrow(/disk full \(injected fault/);
      const failuresSoFar = store.failures;
      // Later calls are unaffected: their nodes commit on their own, the kept batch is retried beside them.
      await expect(chat.say("three")).resolves.toMatch(/^answer after \d+ messages$/);
      await expect(chat.say("four")).resolves.toMatch(/^answer after \d+ messages$/);
      expect(store.failures).toBeGreaterThan(failuresSoFar);
      expect(writer.pending).toBeGreaterThan(0);
      const calls = (): string[] =>
        store
          .readNodes("s")
          .filter((node) => node.name === "Chat.say")
          .map((node) => `${String((node.input as string[])[0])}:${String(node.metadata["status"])}`);
      expect(calls()).toEqual(["one:completed", "three:completed", "four:completed"]);

      // The fault clears: the retry timer commits the kept batch, with nothing else written.
      store.refuse = undefined;
      await until(() => writer.pending === 0);
      expect(calls()).toEqual(["one:completed", "three:completed", "four:completed", "two:error"]);
      const nodes = store.readNodes("s");
      expect(new Set(nodes.map((node) => node.seq)).size).toBe(nodes.length);
      // The retried call went in last, but the head stays on the newest call, and the next call follows it.
      const four = nodes.find((node) => node.name === "Chat.say" && (node.input as string[])[0] === "four")!;
      expect(store.head("s")).toBe(four.id);
      await chat.say("five");
      const five = store.readNodes("s").find((node) => node.name === "Chat.say" && (node.input as string[])[0] === "five")!;
      expect(five.predecessor).toBe(four.id);

      // Reported once for the whole failure, to the handler and on the diagnostics channel.
      expect(reported).toHaveLength(1);
      expect(reported[0]).toMatchObject({ type: "commit-failed", sessionId: "s", location: "in-memory store" });
      expect(String(reported[0]!.error)).toMatch(/disk full/);
      expect(published.messages).toEqual(reported);
    } finally {
      published.stop();
      store.close();
    }
  });

  it("background flushing resumes after a failed commit: later writes and the kept batch commit without an explicit flush", async () => {
    const store = new FaultyStore();
    store.createSession("s");
    const reported: SessionCommitFailure[] = [];
    const writer = new SessionNodeWriter(store, "s", { onCommitError: (failure) => reported.push(failure) });
    store.failNext();
    writer.append({ id: "a", role: "user", name: "user" });
    await tick();
    expect(store.failures).toBe(1);
    expect(writer.pending).toBe(1);
    writer.append({ id: "b", role: "user", name: "user" });
    await until(() => store.readNodes("s").length === 2);
    expect(writer.pending).toBe(0);
    expect(store.readNodes("s").map((node) => [node.id, node.seq])).toEqual([
      ["a", 0],
      ["b", 1],
    ]);

    // Idle: nothing else is written, and the timer retries the kept batch.
    store.failNext();
    writer.append({ id: "c", role: "user", name: "user" });
    await tick();
    expect(store.failures).toBe(2);
    await until(() => writer.pending === 0);
    expect(store.head("s")).toBe("c");
    // Two separate failures, each reported once.
    expect(reported).toHaveLength(2);
    store.close();
  });

  it("a call whose batch failed in the background but is committed by the time it returns succeeds: nothing acknowledged is lost", async () => {
    const store = new FaultyStore();
    store.createSession("s");
    class Slow extends Agent {
      async work(value: number): Promise<number> {
        // The entry node's background commit fails meanwhile.
        await tick();
        await tick();
        return value * 2;
      }
    }
    const writer = new SessionNodeWriter(store, "s");
    const slow = new Slow({ context: new Context({}, { store: writer }) });
    store.failNext();
    await expect(slow.work(21)).resolves.toBe(42);
    expect(store.failures).toBe(1);
    expect(store.readNodes("s")).toEqual([expect.objectContaining({ name: "Slow.work", output: 42, metadata: expect.objectContaining({ status: "completed" }) })]);
    store.close();
  });

  it("flush() throws while anything stays uncommitted, and commits it once it can", () => {
    const store = new FaultyStore();
    store.createSession("s");
    const writer = new SessionNodeWriter(store, "s", { batching: "manual" });
    writer.append({ id: "a", role: "user", name: "user", input: "kept" });
    store.refuse = appendsInputWith("kept");
    expect(() => writer.flush()).toThrow(/disk full/);
    writer.append({ id: "b", role: "user", name: "user" });
    // b is committed on its own; a is still refused, so flush still says so.
    expect(() => writer.flush()).toThrow(/disk full/);
    expect(store.readNodes("s").map((node) => node.id)).toEqual(["b"]);
    // An update of a kept node folds into it.
    writer.update("a", { output: "done" });
    expect(writer.pending).toBe(1);
    store.refuse = undefined;
    writer.flush();
    expect(store.readNodes("s").map((node) => [node.id, node.output])).toEqual([
      ["b", undefined],
      ["a", "done"],
    ]);
    expect(writer.graph().get("a")!.seq).toBe(store.readNodes("s")[1]!.seq);
    // a went in after b, but b (the newer top-level node) stays the head.
    expect(store.head("s")).toBe("b");
    store.close();
  });
});
