import { ReachExceededError } from "@rein/guard";
import { InMemorySessionStore, SessionNodeWriter } from "@rein/session";
import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import type { ModelCallOptions, ModelRequest, ModelResponse, ModelStreamEvent } from "../model/model-provider";
import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "./runtime";
import type { RunEvent } from "./runtime-events";
import { withRunListener } from "./run-listener";
import type { SpendReserver } from "./spend-reserver";

// The reach deadline passing while a model request is in flight: the request is cut off, not waited for;
// and passing after its answer came: the tool call it asked for never starts. Each run gets 1 s before its
// deadline, so the request starts well within it even on a loaded machine.

/** A promise that settles only when the test lets it (or after 30 s): what a provider that never answers waits on. */
function held(): { wait: Promise<void>; release: () => void } {
  let release = (): void => {};
  const wait = new Promise<void>((resolve) => {
    const fallback = setTimeout(resolve, 30_000);
    release = () => {
      clearTimeout(fallback);
      resolve();
    };
  });
  return { wait, release };
}

describe("reach: the deadline during a model request and right after its answer", () => {
  it("ask: the provider's signal fires with the deadline's ReachExceededError, the turn ends with it, and what was recorded stays recorded", async () => {
    let reason: unknown;
    /** Answers its first request at once; the second waits on its signal and then fails as an SDK does. */
    class SlowSecondAnswer extends ScriptedProvider {
      override async complete(request: ModelRequest, options?: ModelCallOptions): Promise<ModelResponse> {
        if (this.requestCount === 0) return super.complete(request, options);
        this.requests.push(request);
        const signal = options?.signal;
        return new Promise((_resolve, reject) => {
          signal?.addEventListener("abort", () => {
            reason = signal.reason;
            reject(new Error("Request was aborted."));
          });
        });
      }
    }
    class Looker extends Agent {
      static methodOptions = { look: { tool: true, description: "Look around." } };
      look(): string {
        return "seen";
      }
    }
    const store = new InMemorySessionStore();
    store.createSession("s", {});
    const context = new Context({}, { store: new SessionNodeWriter(store, "s") });
    const model = new SlowSecondAnswer([{ toolCalls: [{ name: "look", input: {} }] }]);
    const error = await new Looker({ runtime: new Runtime({ provider: model, reach: { timeoutMs: 1_000 } }), context })
      .ask("Look.")
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ReachExceededError);
    expect(error).toMatchObject({ dimension: "deadline", limit: 1_000 });
    // The provider's signal fired with that same error: its request was aborted, not waited for.
    expect(reason).toBe(error);
    expect(model.requests).toHaveLength(2);
    // The answered request and the tool call stay recorded; the cut-off request is an llm node that failed with the deadline.
    const nodes = store.readNodes("s");
    expect(nodes.map((node) => [node.role, node.name, node.metadata["status"]])).toEqual([
      ["llm", "scripted", "completed"],
      ["code", "Looker.look", "completed"],
      ["llm", "scripted", "error"],
    ]);
    expect(nodes[2]!.metadata["error"]).toBe(`ReachExceededError: ${(error as Error).message}`);
  });

  it("stream: a provider that ignores its signal mid-stream still cannot hold the run; the run ends with the deadline's error, status error (not cancelled)", async () => {
    let reason: unknown;
    const answer = held();
    /** Streams one delta, then neither writes nor ends until the test lets it, whatever its signal says. */
    class StalledStream extends ScriptedProvider {
      override async *stream(request: ModelRequest, options?: ModelCallOptions): AsyncIterable<ModelStreamEvent> {
        this.requests.push(request);
        const signal = options?.signal;
        signal?.addEventListener("abort", () => (reason = signal.reason));
        yield { type: "text-delta", text: "Half an ans" };
        await answer.wait;
      }
    }
    const model = new StalledStream();
    const run = new (class Talker extends Agent {})({ runtime: new Runtime({ provider: model, reach: { timeoutMs: 1_000 } }) }).stream("Talk.");
    const events: RunEvent[] = [];
    const iterated = (async () => {
      for await (const event of run) events.push(event);
    })().catch((caught: unknown) => caught);
    const result = await run.result;
    const thrown = await iterated;
    answer.release();
    expect(result.error).toBeInstanceOf(ReachExceededError);
    expect(result).toMatchObject({ status: "error", error: { dimension: "deadline", limit: 1_000 } });
    // No usage came back for the cut-off request: nothing is charged for it (as for any request that failed).
    expect(result).toMatchObject({ requests: 0, usage: { inputTokens: 0, outputTokens: 0 } });
    expect(thrown).toBe(result.error);
    expect(reason).toBe(result.error);
    expect(events.filter((event) => event.type === "text-delta")).toEqual([expect.objectContaining({ text: "Half an ans" })]);
    expect(events.at(-1)).toMatchObject({ type: "run-finish", result: { status: "error" } });
    expect(model.requests).toHaveLength(1);
  });

  it("an answer that came in time, settled past the deadline: the tool call it asks for never starts, the turn ends with the deadline's error", async () => {
    // Settling the answer's spend (a slow key store) takes 1.2 s: the call would start after the 1 s deadline.
    const slowSettle: SpendReserver = {
      reserve: async () => ({ settle: () => new Promise((resolve) => setTimeout(resolve, 1_200)), release: async () => undefined }),
    };
    let started = false;
    class Sender extends Agent {
      static methodOptions = { send: { tool: true, description: "Send the report." } };
      send(): string {
        started = true;
        return "sent";
      }
    }
    const model = new ScriptedProvider([{ toolCalls: [{ name: "send", input: {} }] }, "done"]);
    const agent = new Sender({ runtime: new Runtime({ provider: model, reach: { timeoutMs: 1_000 } }) });
    const error = await withRunListener(() => undefined, () => agent.ask("Send it."), { spend: slowSettle }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ReachExceededError);
    expect(error).toMatchObject({ dimension: "deadline", limit: 1_000 });
    expect(started).toBe(false);
    expect(model.requests).toHaveLength(1);
  });
});

describe("reach: the deadline while a stream's consumer is behind", () => {
  it("stream: a consumer that stopped reading holds the run before a tool call only until the deadline, which ends it with its ReachExceededError", async () => {
    // One answer asking for 700 calls: their tool-call and tool-result events fill the stream's buffer (1,024) long
    // before the last call, and the run waits there for a consumer that never reads again.
    const calls = Array.from({ length: 700 }, (_, index) => ({ name: "note", input: { index } }));
    const model = new ScriptedProvider([{ toolCalls: calls }, "done"]);
    class Noter extends Agent {
      static methodOptions = { note: { tool: true, description: "Take a note." } };
      note(): string {
        return "noted";
      }
    }
    const run = new Noter({ runtime: new Runtime({ provider: model, reach: { timeoutMs: 1_000 } }) }).stream("Take notes.");
    const events = run[Symbol.asyncIterator]();
    await events.next();
    // The consumer reads nothing more: the result must still come, at the deadline (it waited for the reader forever).
    const result = await run.result;
    await events.return?.();
    expect(result.error).toBeInstanceOf(ReachExceededError);
    expect(result).toMatchObject({ status: "error", error: { dimension: "deadline", limit: 1_000 } });
    expect(result.toolCalls).toBeLessThan(700);
    expect(model.requests).toHaveLength(1);
  }, 15_000);
});

describe("reach: the deadline while a Context provider runs", () => {
  it.each([
    ["the turn's opening", 0],
    ["the user turn after a tool's result", 1],
  ])("a provider that does not answer, rendering %s, holds the run only until the deadline, which ends it with its ReachExceededError", async (_label, answersFirst) => {
    // Answers `answersFirst` renders at once, then never: only the deadline can end the wait.
    let renders = 0;
    const context = new Context({}, { providers: { retrieved: () => (renders++ < answersFirst ? "ready" : new Promise<string>(() => undefined)) } });
    class Looker extends Agent {
      static methodOptions = { look: { tool: true, description: "Look around." } };
      look(): string {
        return "seen";
      }
    }
    const model = new ScriptedProvider([{ toolCalls: [{ name: "look", input: {} }] }, "done"]);
    const error = await new Looker({ runtime: new Runtime({ provider: model, reach: { timeoutMs: 1_000 } }), context })
      .ask("Look.")
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ReachExceededError);
    expect(error).toMatchObject({ dimension: "deadline", limit: 1_000 });
    // Cut off while rendering: the request it was rendered for is never sent.
    expect(model.requests).toHaveLength(answersFirst);
  }, 15_000);
});
