/**
 * DESIGN.md §5 overhead budget: a model-tool turn of 4 requests and 3 tool
 * calls with a zero-latency scripted model, DAG recording (in-memory store)
 * and every guard on (recursion ceiling, cycle detection, loop detection),
 * against a hand-written loop making the same provider and tool calls.
 *
 * Target: Rein adds at most 80 µs per turn.
 * Run: pnpm bench (or pnpm exec tsx --tsconfig tsconfig.test.json bench/turn-overhead.ts)
 */
import {
  Agent,
  Context,
  InMemorySessionStore,
  Runtime,
  ScriptedProvider,
  SessionNodeWriter,
  type Message,
  type ModelRequest,
  type ToolResultBlock,
} from "@rein/core";

const TURNS = 2_000;
const WARMUP = 300;

function script(): ScriptedProvider {
  return new ScriptedProvider(
    [
      (_request: ModelRequest, index: number) =>
        index % 4 === 3
          ? "All three lookups done."
          : { toolCalls: [{ name: "lookup", input: { key: `k${index % 4}` } }] },
    ],
    // Nobody reads the requests here: copying each one would be measured as overhead of both loops.
    { whenExhausted: "repeat-last", recordRequests: false },
  );
}

class Lookup extends Agent {
  static methodOptions = { lookup: { tool: true, description: "Look a key up." } };
  lookup(key: string): string {
    return `value of ${key}`;
  }
}

async function reinTurns(count: number): Promise<number> {
  const model = script();
  const store = new InMemorySessionStore();
  store.createSession("bench", {});
  const writer = new SessionNodeWriter(store, "bench", { batching: "manual" });
  // historyFilter false: each turn is measured alone, not against a growing session.
  const context = new Context({}, { store: writer, historyFilter: false });
  const runtime = new Runtime({ provider: model, loopDetection: { enabled: true }, maxSteps: 10_000 });
  const agent = new Lookup({ runtime, context });
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await agent.ask("Look up k0, k1 and k2.");
  return Number(process.hrtime.bigint() - start) / count;
}

async function handWrittenTurns(count: number): Promise<number> {
  const model = script();
  const tools = new Lookup().asTools();
  const spec = tools.map((tool) => tool.spec);
  const lookup = (key: string) => `value of ${key}`;
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) {
    const messages: Message[] = [{ role: "user", content: [{ type: "text", text: "Look up k0, k1 and k2." }] }];
    for (;;) {
      const response = await model.complete({ system: "", messages: [...messages], tools: spec });
      messages.push({ role: "assistant", content: response.content });
      const calls = response.content.filter((block) => block.type === "tool_use");
      if (calls.length === 0) break;
      const results: ToolResultBlock[] = calls.map((call) => ({
        type: "tool_result",
        toolUseId: call.id,
        content: lookup((call.input as { key: string }).key),
      }));
      messages.push({ role: "user", content: results });
    }
  }
  return Number(process.hrtime.bigint() - start) / count;
}

export async function benchTurnOverhead(): Promise<number> {
  console.log("\n== model-tool turn (4 requests, 3 tool calls): Rein with DAG recording and every guard vs a hand-written loop ==");
  await reinTurns(WARMUP);
  await handWrittenTurns(WARMUP);
  const rein: number[] = [];
  const hand: number[] = [];
  for (let round = 0; round < 5; round++) {
    hand.push(await handWrittenTurns(TURNS));
    rein.push(await reinTurns(TURNS));
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const reinUs = median(rein) / 1000;
  const handUs = median(hand) / 1000;
  const added = reinUs - handUs;
  console.log(`hand-written loop: ${handUs.toFixed(1)} µs/turn`);
  console.log(`Rein Agent.ask:    ${reinUs.toFixed(1)} µs/turn (${(reinUs / handUs).toFixed(2)}×)`);
  console.log(`added by Rein: ${added.toFixed(1)} µs/turn — target ≤ 80 µs (${added <= 80 ? "met" : "NOT met"})`);
  return added;
}

if (require.main === module) void benchTurnOverhead();
