import { InMemorySessionStore } from "@rein/session";
import { ContextOverflowError, ProviderError } from "@rein/guard";
import { Agent } from "../agent/agent";
import { Context } from "../context/context";
import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "./runtime";

/** A tool with a side effect the model must not repeat: each call pays, and says so in its result. */
class Cashier extends Agent {
  static methodOptions = { pay: { tool: true, description: "Pay an invoice (cannot be undone)." } };
  paid: number[] = [];
  pay(invoice: number): string {
    this.paid.push(invoice);
    return `invoice ${invoice} paid, receipt R-${invoice}`;
  }
}

const payCall = (invoice: number, id = "call_1") => ({ text: "", toolCalls: [{ id, name: "pay", input: { invoice } }] });

/** The tool results of a request's messages, as `[toolUseId, content]`. */
function resultsIn(request: { messages: readonly { content: readonly unknown[] }[] }): [string, unknown][] {
  return request.messages.flatMap((message) =>
    message.content.flatMap((block) => {
      const result = block as { type: string; toolUseId?: string; content?: unknown };
      return result.type === "tool_result" ? [[result.toolUseId!, result.content] as [string, unknown]] : [];
    }),
  );
}

describe("history after a run that ended between a tool call and the request carrying its result", () => {
  it("a request that failed after the tool ran: the next ask still sends the tool call and its recorded result", async () => {
    const model = new ScriptedProvider([payCall(42), new ProviderError("overloaded", { provider: "scripted" }), "It was paid: R-42."]);
    const agent = new Cashier({ runtime: new Runtime({ provider: model }), context: Context.forSession(new InMemorySessionStore(), "s") });
    await expect(agent.ask("Pay invoice 42.")).rejects.toThrow("overloaded");
    expect(agent.paid).toEqual([42]);
    await agent.ask("Did invoice 42 get paid? If not, pay it.");
    const next = model.requests[2]!;
    expect(resultsIn(next)).toEqual([["call_1", "invoice 42 paid, receipt R-42"]]);
    // The call is there too, answered by that result, before the new question.
    expect(JSON.stringify(next.messages)).toMatch(/"tool_use","id":"call_1".*"tool_result","toolUseId":"call_1".*Did invoice 42 get paid/);
  });

  it("a run stopped by maxIterations after the tool ran: the next ask sends the recorded result", async () => {
    const model = new ScriptedProvider([payCall(7), "Yes, R-7."]);
    const agent = new Cashier({ runtime: new Runtime({ provider: model }), context: Context.forSession(new InMemorySessionStore(), "m") });
    await expect(agent.ask("Pay invoice 7.", { maxIterations: 1 })).rejects.toMatchObject({ name: "MaxIterationsExceededError" });
    await agent.ask("Was invoice 7 paid?");
    expect(resultsIn(model.requests[1]!)).toEqual([["call_1", "invoice 7 paid, receipt R-7"]]);
  });

  it("a Context provider that threw before the second request: the next ask sends the recorded result", async () => {
    let renders = 0;
    const context = Context.forSession(new InMemorySessionStore(), "p", {
      providers: {
        clock: () => {
          if (++renders === 2) throw new Error("clock down");
          return "12:00";
        },
      },
    });
    const model = new ScriptedProvider([payCall(9), "Yes, R-9."], { whenExhausted: "repeat-last" });
    const agent = new Cashier({ runtime: new Runtime({ provider: model }), context });
    await expect(agent.ask("Pay invoice 9.")).rejects.toThrow("clock down");
    await agent.ask("Was invoice 9 paid?");
    expect(resultsIn(model.requests.at(-1)!)).toEqual([["call_1", "invoice 9 paid, receipt R-9"]]);
  });

  it("a tool call that failed is sent back as an error result, not as success", async () => {
    class Flaky extends Agent {
      static methodOptions = { pay: { tool: true, description: "Pay an invoice." } };
      pay(invoice: number): string {
        throw new Error(`bank unreachable for invoice ${invoice}`);
      }
    }
    const model = new ScriptedProvider([payCall(5), new ProviderError("overloaded", { provider: "scripted" }), "Not paid."]);
    const agent = new Flaky({ runtime: new Runtime({ provider: model }), context: Context.forSession(new InMemorySessionStore(), "f") });
    await expect(agent.ask("Pay invoice 5.")).rejects.toThrow("overloaded");
    await agent.ask("Was invoice 5 paid?");
    const result = model.requests[2]!.messages.flatMap((message) => message.content).find((block) => block.type === "tool_result");
    expect(result).toMatchObject({ toolUseId: "call_1", isError: true, content: "'pay' ended error" });
  });

  it("a run that completed sends each tool result once: the recorded call adds nothing to what the request carried", async () => {
    const model = new ScriptedProvider([payCall(3), "Paid.", "Yes."]);
    const agent = new Cashier({ runtime: new Runtime({ provider: model }), context: Context.forSession(new InMemorySessionStore(), "c") });
    await agent.ask("Pay invoice 3.");
    await agent.ask("Was it paid?");
    expect(resultsIn(model.requests[2]!)).toEqual([["call_1", "invoice 3 paid, receipt R-3"]]);
  });
});

describe("history after a compaction", () => {
  class Noter extends Agent {
    static methodOptions = { note: { tool: true, description: "Write a note." } };
    note(text: string): string {
      return `noted ${text}`;
    }
    async say(text: string): Promise<string> {
      return this.ask(text);
    }
  }
  const texts = (request: { messages: readonly { role: string; content: readonly unknown[] }[] }) =>
    request.messages.map((message) => `${message.role}: ${message.content.map((block) => JSON.stringify(block)).join(" ")}`);

  it.each([
    ["bare asks", (agent: Noter, text: string) => agent.ask(text)],
    ["asks inside a method (a top-level call)", (agent: Noter, text: string) => agent.say(text)],
  ])("%s: a later turn on the session sends the summary in place of what it replaced, as the loop that compacted did", async (_how, turn) => {
    const model = new ScriptedProvider([
      "The early fact is noted.",
      { toolCalls: [{ id: "call_1", name: "note", input: { text: "second" } }] },
      new ContextOverflowError("prompt is too long", { provider: "scripted" }),
      "SUMMARY-OF-EARLIER",
      "done",
      "third answer",
    ]);
    const agent = new Noter({ runtime: new Runtime({ provider: model }), context: Context.forSession(new InMemorySessionStore(), "s") });
    await turn(agent, "EARLY-FACT: remember this.");
    await turn(agent, "Note the second thing.");
    await turn(agent, "And the third?");
    const restarted = texts(model.requests[4]!);
    const third = texts(model.requests[5]!);
    // The loop's request after its compaction: the summary, the latest assistant turn and its result.
    expect(restarted.join("\n")).not.toContain("EARLY-FACT");
    expect(restarted[0]).toContain("SUMMARY-OF-EARLIER");
    // The next ask continues from that, not from the whole transcript the summary replaced.
    expect(third.join("\n")).not.toContain("EARLY-FACT");
    expect(third[0]).toContain("SUMMARY-OF-EARLIER");
    expect(third.slice(1, 3)).toEqual([restarted[1], restarted[2]]);
    expect(third.at(-1)).toContain("And the third?");
  });

  it("the loop's request after a compaction keeps the Context's blocks", async () => {
    const model = new ScriptedProvider([
      { toolCalls: [{ name: "note", input: { text: "x" } }] },
      new ContextOverflowError("prompt is too long", { provider: "scripted" }),
      "summary",
      "done",
    ]);
    const agent = new Noter({ runtime: new Runtime({ provider: model }), context: new Context({ rules: "ALWAYS-ANSWER-IN-FRENCH" }) });
    await agent.ask("Write a note.");
    expect(JSON.stringify(model.requests.at(-1)!.messages)).toContain("ALWAYS-ANSWER-IN-FRENCH");
  });
});
