import fc from "fast-check";
import type { ModelRequest } from "../model/model-provider";
import { ScriptedProvider } from "../model/scripted-provider";
import { Runtime } from "../runtime/runtime";
import { InMemorySessionStore } from "@rein/session";
import { SessionNodeWriter } from "@rein/session";
import { Chat } from "../session/__fixtures__/chat-agent";
import { Context } from "./context";

/**
 * Random interleavings of Contexts on one session: up to four Contexts,
 * each made another way (`Context.forSession`, `new Context({ store: new
 * SessionNodeWriter(store, id) })`, a `derive()` of a forSession Context),
 * used in a random order, some calls started at once. After every run:
 * no call failed, every `seq` is distinct, every edge points at a stored
 * node, the top-level calls form one chain in the order they started, and
 * a call started alone saw every earlier question, in order.
 */
type Maker = "forSession" | "newWriter" | "derived";
interface Step {
  readonly context: number;
  /** Start with the previous step, before it finishes. */
  readonly together: boolean;
}

/** Looks a key up, then answers with the questions (`q…`) it was sent, in order. */
function model(): ScriptedProvider {
  return new ScriptedProvider(
    [
      (request: ModelRequest) => {
        const last = request.messages[request.messages.length - 1]!;
        if (!last.content.some((block) => block.type === "tool_result")) return { toolCalls: [{ name: "lookup", input: { key: "k" } }] };
        return request.messages
          .filter((message) => message.role === "user")
          .flatMap((message) => message.content)
          .filter((block) => block.type === "text")
          .map((block) => (block as { text: string }).text)
          .filter((text) => /^q\d+$/.test(text))
          .join(",");
      },
    ],
    { whenExhausted: "repeat-last", recordRequests: false },
  );
}

function makeContext(store: InMemorySessionStore, maker: Maker): Context {
  if (maker === "forSession") return Context.forSession(store, "chat");
  if (maker === "newWriter") return new Context({}, { store: new SessionNodeWriter(store, "chat") });
  return Context.forSession(store, "chat").derive();
}

const makersArb = fc.array(fc.constantFrom<Maker>("forSession", "newWriter", "derived"), { minLength: 1, maxLength: 4 });
const stepsArb = fc.array(fc.record({ context: fc.nat({ max: 3 }), together: fc.boolean() }), { minLength: 1, maxLength: 10 });

test("any interleaving of Contexts on one session stays one consistent conversation", async () => {
  await fc.assert(
    fc.asyncProperty(makersArb, stepsArb, async (makers: Maker[], steps: Step[]) => {
      const store = new InMemorySessionStore();
      store.createSession("chat", {});
      const runtime = new Runtime({ provider: model() });
      const contexts = makers.map((maker) => makeContext(store, maker));
      // Consecutive steps marked `together` start at once.
      const groups: number[][] = [];
      steps.forEach((step) => {
        const context = step.context % contexts.length;
        if (step.together && groups.length > 0) groups[groups.length - 1]!.push(context);
        else groups.push([context]);
      });
      let asked = 0;
      const started: string[] = [];
      for (const group of groups) {
        const texts = group.map(() => `q${asked++}`);
        const answers = await Promise.all(
          group.map((context, index) => {
            started.push(texts[index]!);
            return new Chat({ runtime, context: contexts[context]! }).say(texts[index]!);
          }),
        );
        if (group.length === 1) expect(answers[0]).toBe(started.join(","));
      }

      const nodes = store.readNodes("chat");
      const ids = new Set(nodes.map((node) => node.id));
      expect(new Set(nodes.map((node) => node.seq)).size).toBe(nodes.length);
      for (const node of nodes) {
        if (node.caller !== null) expect(ids.has(node.caller)).toBe(true);
        if (node.predecessor !== null) expect(ids.has(node.predecessor)).toBe(true);
        if (node.role === "code") expect(node.metadata["status"]).toBe("completed");
      }
      const calls = nodes.filter((node) => node.caller === null);
      expect(calls.map((node) => (node.input as string[])[0])).toEqual(started);
      calls.forEach((call, index) => expect(call.predecessor).toBe(index === 0 ? null : calls[index - 1]!.id));
      store.close();
    }),
    { numRuns: 40 },
  );
});
